//! A group of 32 code units with several that are not ASCII, encoded as UTF-8 with
//! AVX-512, where the CPU has it (asked at run time): sixteen units at a time, each unit's
//! one to four bytes made in a 32-bit lane and the lanes' used bytes packed by one byte
//! compress (VBMI2), with no table and no branch on the units.

use std::arch::x86_64::*;

use super::avx2::{Wide, GROUP};

/// Whether this CPU has AVX-512 with VBMI2 (and BMI2 for `pdep`); std asks once.
#[inline]
pub fn available() -> bool {
    is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512bw")
        && is_x86_feature_detected!("avx512vbmi2")
        && is_x86_feature_detected!("bmi2")
}

/// The group as UTF-8 at the start of `out` (at least 128 bytes): the bytes written.
///
/// # Safety
/// `available()`.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,bmi2,popcnt")]
pub unsafe fn encode_group<T: Wide>(group: &[T; GROUP], out: &mut [u8]) -> usize {
    let p = group.as_ptr();
    let n = encode_sixteen(T::sixteen(p), out);
    n + encode_sixteen(T::sixteen(p.add(GROUP / 2)), &mut out[n..])
}

/// Sixteen units, the lanes of `x`, as UTF-8 at the start of `out` (at least 64 bytes,
/// all of them stored): the bytes that count.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,bmi2,popcnt")]
unsafe fn encode_sixteen(x: __m512i, out: &mut [u8]) -> usize {
    let set = _mm512_set1_epi32;
    let continuation = |bits: __m512i| _mm512_or_si512(_mm512_and_si512(bits, set(0x3F)), set(0x80));
    let (last, middle, first) =
        (continuation(x), continuation(_mm512_srli_epi32::<6>(x)), continuation(_mm512_srli_epi32::<12>(x)));
    let two = _mm512_or_si512(_mm512_or_si512(_mm512_srli_epi32::<6>(x), set(0xC0)), _mm512_slli_epi32::<8>(last));
    let three = _mm512_or_si512(
        _mm512_or_si512(_mm512_srli_epi32::<12>(x), set(0xE0)),
        _mm512_or_si512(_mm512_slli_epi32::<8>(middle), _mm512_slli_epi32::<16>(last)),
    );
    let four = _mm512_or_si512(
        _mm512_or_si512(_mm512_or_si512(_mm512_srli_epi32::<18>(x), set(0xF0)), _mm512_slli_epi32::<8>(first)),
        _mm512_or_si512(_mm512_slli_epi32::<16>(middle), _mm512_slli_epi32::<24>(last)),
    );
    let (wide, wider, widest) = (
        _mm512_cmpgt_epu32_mask(x, set(0x7F)),
        _mm512_cmpgt_epu32_mask(x, set(0x7FF)),
        _mm512_cmpgt_epu32_mask(x, set(0xFFFF)),
    );
    let lanes =
        _mm512_mask_mov_epi32(_mm512_mask_mov_epi32(_mm512_mask_mov_epi32(x, wide, two), wider, three), widest, four);
    // Byte 0 of every lane, byte 1 of a lane of two bytes or more, byte 2 of three or more,
    // byte 3 of four.
    let kept = 0x1111_1111_1111_1111
        | _pdep_u64(u64::from(wide), 0x2222_2222_2222_2222)
        | _pdep_u64(u64::from(wider), 0x4444_4444_4444_4444)
        | _pdep_u64(u64::from(widest), 0x8888_8888_8888_8888);
    let out = &mut out[..64];
    _mm512_storeu_si512(out.as_mut_ptr().cast(), _mm512_maskz_compress_epi8(kept, lanes));
    kept.count_ones() as usize
}
