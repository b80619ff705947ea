//! Code units of every width encoded as UTF-8 32 at a time with AVX2, where the CPU has it
//! (asked at run time): a group of 32 units is narrowed to bytes and tested with a few
//! instructions, and stored as it is when it is all ASCII.

use std::arch::x86_64::*;

use super::{avx512, utf8_word, CodeUnit};

/// Units encoded at once.
pub const GROUP: usize = 32;

/// Output room a group needs: four bytes a unit, and a whole 32-byte store past the last.
const ROOM: usize = 5 * GROUP;

/// Whether this CPU has AVX2 (and BMI1 and POPCNT, as every such CPU does); std asks once.
#[inline]
pub fn available() -> bool {
    is_x86_feature_detected!("avx2") && is_x86_feature_detected!("bmi1") && is_x86_feature_detected!("popcnt")
}

/// A code unit of a `str`, read 32 at a time.
pub trait Wide: CodeUnit {
    /// The 32 units at `p` narrowed to bytes (exact where they are ASCII), and whether
    /// all of them are ASCII.
    ///
    /// # Safety
    /// AVX2 is available, and `p` points to 32 readable units.
    unsafe fn narrow(p: *const Self) -> (__m256i, bool);

    /// A mask with bit `k` set where unit `k` of the 32 at `p` is not ASCII.
    ///
    /// # Safety
    /// As `narrow`.
    unsafe fn non_ascii(p: *const Self) -> u32;

    /// For the 32 units at `p`, 32 bytes (in any order) that are `0xFF` where a unit is
    /// `ascii` and 0 elsewhere.
    ///
    /// # Safety
    /// As `narrow`.
    unsafe fn equal(p: *const Self, ascii: u8) -> __m256i;

    /// The 8 units at `p` in 32-bit lanes.
    ///
    /// # Safety
    /// AVX2 is available, and `p` points to 8 readable units.
    unsafe fn eight(p: *const Self) -> __m256i;

    /// The 16 units at `p` in 32-bit lanes.
    ///
    /// # Safety
    /// AVX-512F is available, and `p` points to 16 readable units.
    unsafe fn sixteen(p: *const Self) -> __m512i;
}

impl Wide for u8 {
    #[target_feature(enable = "avx2")]
    unsafe fn narrow(p: *const u8) -> (__m256i, bool) {
        let bytes = _mm256_loadu_si256(p.cast());
        (bytes, _mm256_movemask_epi8(bytes) == 0)
    }

    #[target_feature(enable = "avx2")]
    unsafe fn non_ascii(p: *const u8) -> u32 {
        _mm256_movemask_epi8(_mm256_loadu_si256(p.cast())) as u32
    }

    #[target_feature(enable = "avx2")]
    unsafe fn equal(p: *const u8, ascii: u8) -> __m256i {
        _mm256_cmpeq_epi8(_mm256_loadu_si256(p.cast()), _mm256_set1_epi8(ascii as i8))
    }

    #[target_feature(enable = "avx2")]
    unsafe fn eight(p: *const u8) -> __m256i {
        _mm256_cvtepu8_epi32(_mm_loadl_epi64(p.cast()))
    }

    #[target_feature(enable = "avx512f")]
    unsafe fn sixteen(p: *const u8) -> __m512i {
        _mm512_cvtepu8_epi32(_mm_loadu_si128(p.cast()))
    }
}

impl Wide for u16 {
    #[target_feature(enable = "avx2")]
    unsafe fn narrow(p: *const u16) -> (__m256i, bool) {
        let (lo, hi) = (_mm256_loadu_si256(p.cast()), _mm256_loadu_si256(p.add(16).cast()));
        // Packing works within each 128-bit half: the permute puts the quarters in order.
        let bytes = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packus_epi16(lo, hi));
        (bytes, _mm256_testz_si256(_mm256_or_si256(lo, hi), _mm256_set1_epi16(0xFF80u16 as i16)) == 1)
    }

    #[target_feature(enable = "avx2")]
    unsafe fn non_ascii(p: *const u16) -> u32 {
        // A unit from 0x80 up has its top bit set once 0x7F80 is added (saturating); signed
        // packing keeps that bit, one byte a unit.
        let high = |k: usize| _mm256_adds_epu16(_mm256_loadu_si256(p.add(k).cast()), _mm256_set1_epi16(0x7F80));
        let packed = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packs_epi16(high(0), high(16)));
        _mm256_movemask_epi8(packed) as u32
    }

    #[target_feature(enable = "avx2")]
    unsafe fn equal(p: *const u16, ascii: u8) -> __m256i {
        let equal = |k: usize| _mm256_cmpeq_epi16(_mm256_loadu_si256(p.add(k).cast()), _mm256_set1_epi16(ascii.into()));
        // Signed packing keeps -1 and 0 as they are.
        _mm256_packs_epi16(equal(0), equal(16))
    }

    #[target_feature(enable = "avx2")]
    unsafe fn eight(p: *const u16) -> __m256i {
        _mm256_cvtepu16_epi32(_mm_loadu_si128(p.cast()))
    }

    #[target_feature(enable = "avx512f")]
    unsafe fn sixteen(p: *const u16) -> __m512i {
        _mm512_cvtepu16_epi32(_mm256_loadu_si256(p.cast()))
    }
}

impl Wide for u32 {
    #[target_feature(enable = "avx2")]
    unsafe fn narrow(p: *const u32) -> (__m256i, bool) {
        let load = |k: usize| _mm256_loadu_si256(p.add(k).cast());
        let (a, b, c, d) = (load(0), load(8), load(16), load(24));
        // Code points fit 31 bits: unsigned saturation keeps those below 0x10000 exact, then
        // those below 0x80 (a wider one may become any byte; the test below catches it).
        let bytes = _mm256_packus_epi16(_mm256_packus_epi32(a, b), _mm256_packus_epi32(c, d));
        // Each half holds four units of each source vector: put the 4-byte groups in order.
        let bytes = _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        let any = _mm256_or_si256(_mm256_or_si256(a, b), _mm256_or_si256(c, d));
        (bytes, _mm256_testz_si256(any, _mm256_set1_epi32(!0x7F)) == 1)
    }

    #[target_feature(enable = "avx2")]
    unsafe fn non_ascii(p: *const u32) -> u32 {
        let high = |k: usize| {
            let wide = _mm256_cmpgt_epi32(_mm256_loadu_si256(p.add(k).cast()), _mm256_set1_epi32(0x7F));
            _mm256_movemask_ps(_mm256_castsi256_ps(wide)) as u32
        };
        high(0) | high(8) << 8 | high(16) << 16 | high(24) << 24
    }

    #[target_feature(enable = "avx2")]
    unsafe fn equal(p: *const u32, ascii: u8) -> __m256i {
        let equal = |k: usize| _mm256_cmpeq_epi32(_mm256_loadu_si256(p.add(k).cast()), _mm256_set1_epi32(ascii.into()));
        _mm256_packs_epi16(_mm256_packs_epi32(equal(0), equal(8)), _mm256_packs_epi32(equal(16), equal(24)))
    }

    #[target_feature(enable = "avx2")]
    unsafe fn eight(p: *const u32) -> __m256i {
        _mm256_loadu_si256(p.cast())
    }

    #[target_feature(enable = "avx512f")]
    unsafe fn sixteen(p: *const u32) -> __m512i {
        _mm512_loadu_si512(p.cast())
    }
}

/// Whether every byte of `bytes` is ASCII, 128 bytes a test.
///
/// # Safety
/// AVX2 is available.
#[target_feature(enable = "avx2")]
pub unsafe fn is_ascii(bytes: &[u8]) -> bool {
    let mut blocks = bytes.chunks_exact(4 * GROUP);
    for block in &mut blocks {
        let load = |k: usize| _mm256_loadu_si256(block.as_ptr().add(k * GROUP).cast());
        let any = _mm256_or_si256(_mm256_or_si256(load(0), load(1)), _mm256_or_si256(load(2), load(3)));
        if _mm256_movemask_epi8(any) != 0 {
            return false;
        }
    }
    blocks.remainder().is_ascii()
}

/// How many of `units` are `ascii`, 32 a step: a step's matches are added up in byte lanes
/// (255 steps at most, so that no lane wraps), then the lanes summed by `psadbw`; several
/// times faster than a mask and a popcount a step.
///
/// # Safety
/// AVX2 is available.
#[target_feature(enable = "avx2")]
pub unsafe fn count<T: Wide>(units: &[T], ascii: u8) -> usize {
    let mut groups = units.chunks_exact(GROUP);
    let mut total = 0;
    while groups.len() > 0 {
        let mut lanes = _mm256_setzero_si256();
        for group in groups.by_ref().take(u8::MAX.into()) {
            lanes = _mm256_sub_epi8(lanes, T::equal(group.as_ptr(), ascii));
        }
        let mut sums = [0u64; 4];
        _mm256_storeu_si256(sums.as_mut_ptr().cast(), _mm256_sad_epu8(lanes, _mm256_setzero_si256()));
        total += sums.iter().sum::<u64>() as usize;
    }
    total + groups.remainder().iter().filter(|&&u| u.into() == u32::from(ascii)).count()
}

/// Encodes whole groups of `units` as surrogatepass UTF-8 into `buf` while it has room for
/// one more: the units read and the bytes written. Two groups are tested at once, so that
/// a run of ASCII costs one branch for 64 units. With `AVX512`, a group holding two or
/// more units that are not ASCII is encoded by `avx512::encode_group`.
///
/// # Safety
/// AVX2, BMI1 and POPCNT are available (`available`), and with `AVX512` what `avx512` needs
/// (`avx512::available`).
#[target_feature(enable = "avx2,bmi1,popcnt")]
pub unsafe fn encode_groups<T: Wide, const AVX512: bool>(units: &[T], buf: &mut [u8]) -> (usize, usize) {
    let (src, dst) = (units.as_ptr(), buf.as_mut_ptr());
    let (mut i, mut n) = (0, 0);
    // SAFETY (each group): the loop conditions keep its units inside `units` and its
    // output, `ROOM` bytes at most, inside `buf`.
    while i + 2 * GROUP <= units.len() && n + 2 * ROOM <= buf.len() {
        let ((first, first_ascii), (second, second_ascii)) = (T::narrow(src.add(i)), T::narrow(src.add(i + GROUP)));
        _mm256_storeu_si256(dst.add(n).cast(), first);
        if first_ascii && second_ascii {
            _mm256_storeu_si256(dst.add(n + GROUP).cast(), second);
            (i, n) = (i + 2 * GROUP, n + 2 * GROUP);
            continue;
        }
        n += if first_ascii { GROUP } else { not_ascii::<T, AVX512>(units, i, dst.add(n)) };
        _mm256_storeu_si256(dst.add(n).cast(), second);
        n += if second_ascii { GROUP } else { not_ascii::<T, AVX512>(units, i + GROUP, dst.add(n)) };
        i += 2 * GROUP;
    }
    while i + GROUP <= units.len() && n + ROOM <= buf.len() {
        let (bytes, ascii) = T::narrow(src.add(i));
        _mm256_storeu_si256(dst.add(n).cast(), bytes);
        n += if ascii { GROUP } else { not_ascii::<T, AVX512>(units, i, dst.add(n)) };
        i += GROUP;
    }
    (i, n)
}

/// The group at `i` of `units`, which is not all ASCII, its narrowed bytes stored at `out`
/// already: the bytes it takes.
///
/// # Safety
/// As `encode_groups`; the group is inside `units`, and `ROOM` bytes from `out` are writable.
#[inline]
#[target_feature(enable = "avx2,bmi1,popcnt")]
unsafe fn not_ascii<T: Wide, const AVX512: bool>(units: &[T], i: usize, out: *mut u8) -> usize {
    let src = units.as_ptr().add(i);
    let mask = T::non_ascii(src);
    match one_of_two_or_three_bytes(units, i, mask) {
        Some((at, cp)) => GROUP - 1 + unit_then_rest(out.add(at), cp, src.add(at + 1)),
        None => few_or_many::<T, AVX512>(units, i, mask, out),
    }
}

/// The one unit of the group at `i` that is not ASCII (`mask` has one bit), when it takes
/// two or three bytes and 32 units follow it in `units`: where it is in the group, and it.
#[inline]
fn one_of_two_or_three_bytes<T: CodeUnit>(units: &[T], i: usize, mask: u32) -> Option<(usize, u32)> {
    if mask & mask.wrapping_sub(1) != 0 {
        return None;
    }
    let at = mask.trailing_zeros() as usize;
    let cp: u32 = (*units.get(i + at)?).into();
    if cp >= 0x1_0000 || units.len() < i + at + 1 + GROUP {
        return None;
    }
    Some((at, cp))
}

/// Writes `cp` as UTF-8 at `out`, then the 32 units from `rest` (those after it), narrowed
/// again from the source rather than moved: the bytes `cp` takes. What follows the group's
/// bytes is written over by the next one.
///
/// # Safety
/// AVX2 is available, `rest` points to 32 readable units, and 36 bytes from `out` are writable.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn unit_then_rest<T: Wide>(out: *mut u8, cp: u32, rest: *const T) -> usize {
    let (word, len) = utf8_word(cp);
    out.cast::<u32>().write_unaligned(word.to_le());
    _mm256_storeu_si256(out.add(len).cast(), T::narrow(rest).0);
    len
}

/// At most this many units of a group that are not ASCII are encoded one by one, in place;
/// a group with more is encoded eight units at a time (`encode_eight`).
const FEW: u32 = 4;

/// With AVX-512 (VBMI2), a group with more than this many is encoded by it: measured
/// cheaper from two units up (co-3's groups of two to four arrows), dearer for one.
const FEW_AVX512: u32 = 1;

/// The group at `i` of `units`, holding units that are not ASCII (bit `k` of `mask` for
/// unit `k`), its narrowed bytes stored at the start of `out` (`ROOM` long) already: the
/// bytes written. Not inlined, so that the loop of groups keeps its registers.
///
/// # Safety
/// As `not_ascii`.
#[inline(never)]
#[target_feature(enable = "avx2,bmi1,popcnt")]
unsafe fn few_or_many<T: Wide, const AVX512: bool>(units: &[T], i: usize, mut mask: u32, out: *mut u8) -> usize {
    let src = units.as_ptr().add(i);
    let group = &*src.cast::<[T; GROUP]>();
    if AVX512 && mask.count_ones() > FEW_AVX512 {
        return avx512::encode_group(group, std::slice::from_raw_parts_mut(out, ROOM));
    }
    // The units after each one are narrowed again from the source: a group must follow.
    if mask.count_ones() > FEW || units.len() < i + 2 * GROUP {
        return dense(group, std::slice::from_raw_parts_mut(out, ROOM));
    }
    // The bytes before the first such unit are in place; each is written where the bytes
    // before it end. SAFETY: `at` < 32 and `shift` <= 3 * FEW, so each write ends inside `ROOM`.
    let mut shift = 0;
    while mask != 0 {
        let at = mask.trailing_zeros() as usize;
        shift += unit_then_rest(out.add(at + shift), group[at].into(), src.add(at + 1)) - 1;
        mask &= mask - 1;
    }
    GROUP + shift
}

/// A group with many units that are not ASCII, encoded eight at a time into `out` (`ROOM` long).
#[target_feature(enable = "avx2")]
unsafe fn dense<T: Wide>(group: &[T; GROUP], out: &mut [u8]) -> usize {
    (0..GROUP / 8).fold(0, |n, k| {
        let x = T::eight(group[8 * k..].as_ptr());
        n + match _mm256_testz_si256(x, _mm256_set1_epi32(!0xFFFF)) == 1 {
            true => encode_eight::<false>(x, &mut out[n..]),
            false => encode_eight::<true>(x, &mut out[n..]),
        }
    })
}

/// Eight units, the lanes of `x`, as UTF-8 at the start of `out` (at least 32 bytes): the
/// bytes written. Each unit's one to four bytes (a surrogate's three, as `surrogatepass`
/// writes them) are made in its lane at once and the lanes packed by one shuffle a half;
/// the work for four bytes is done only when `FOUR` says a unit may take them.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn encode_eight<const FOUR: bool>(x: __m256i, out: &mut [u8]) -> usize {
    let set = |v: i32| _mm256_set1_epi32(v);
    let continuation = |bits: __m256i| _mm256_or_si256(_mm256_and_si256(bits, set(0x3F)), set(0x80));
    let (last, middle) = (continuation(x), continuation(_mm256_srli_epi32::<6>(x)));
    let two = _mm256_or_si256(_mm256_or_si256(_mm256_srli_epi32::<6>(x), set(0xC0)), _mm256_slli_epi32::<8>(last));
    let three = _mm256_or_si256(
        _mm256_or_si256(_mm256_srli_epi32::<12>(x), set(0xE0)),
        _mm256_or_si256(_mm256_slli_epi32::<8>(middle), _mm256_slli_epi32::<16>(last)),
    );
    let (wide, wider) = (_mm256_cmpgt_epi32(x, set(0x7F)), _mm256_cmpgt_epi32(x, set(0x7FF)));
    let mut lanes = _mm256_blendv_epi8(_mm256_blendv_epi8(x, two, wide), three, wider);
    let bits = |v: __m256i| _mm256_movemask_ps(_mm256_castsi256_ps(v)) as usize;
    // A lane's bytes less one, two bits a lane: the masks nest, so the low bit is their parity.
    let (mut low, high) = (bits(wide) ^ bits(wider), bits(wider));
    if FOUR {
        let first = continuation(_mm256_srli_epi32::<12>(x));
        let four = _mm256_or_si256(
            _mm256_or_si256(_mm256_or_si256(_mm256_srli_epi32::<18>(x), set(0xF0)), _mm256_slli_epi32::<8>(first)),
            _mm256_or_si256(_mm256_slli_epi32::<16>(middle), _mm256_slli_epi32::<24>(last)),
        );
        let widest = _mm256_cmpgt_epi32(x, set(0xFFFF));
        lanes = _mm256_blendv_epi8(lanes, four, widest);
        low ^= bits(widest);
    }
    let index = |half: usize| (low >> (4 * half) & 0xF) | (high >> (4 * half) & 0xF) << 4;
    let (first_half, second_half) = (index(0), index(1));
    let shuffle = _mm256_loadu2_m128i(PACK[second_half].as_ptr().cast(), PACK[first_half].as_ptr().cast());
    let packed = _mm256_shuffle_epi8(lanes, shuffle);
    let (first_len, second_len) = (usize::from(PACK_LEN[first_half]), usize::from(PACK_LEN[second_half]));
    // Each half's 16 bytes, the second's from where the first's used ones end.
    let out = &mut out[..32];
    _mm_storeu_si128(out.as_mut_ptr().cast(), _mm256_castsi256_si128(packed));
    _mm_storeu_si128(out[first_len..].as_mut_ptr().cast(), _mm256_extracti128_si256::<1>(packed));
    first_len + second_len
}

/// For four 32-bit lanes of one to four UTF-8 bytes each (lane `j`'s bytes less one is bit
/// `j` of the index plus twice bit `j + 4`), the shuffle that packs their bytes together.
const PACK: [[u8; 16]; 256] = {
    let mut table = [[0x80u8; 16]; 256];
    let mut index = 0;
    while index < 256 {
        let mut n = 0;
        let mut lane = 0;
        while lane < 4 {
            let len = 1 + (index >> lane & 1) + 2 * (index >> (lane + 4) & 1);
            let mut k = 0;
            while k < len {
                table[index][n] = (4 * lane + k) as u8;
                (n, k) = (n + 1, k + 1);
            }
            lane += 1;
        }
        index += 1;
    }
    table
};

/// The bytes each `PACK` shuffle keeps.
const PACK_LEN: [u8; 256] = {
    let mut lens = [0u8; 256];
    let mut index = 0;
    while index < 256 {
        let mut lane = 0;
        while lane < 4 {
            lens[index] += (1 + (index >> lane & 1) + 2 * (index >> (lane + 4) & 1)) as u8;
            lane += 1;
        }
        index += 1;
    }
    lens
};
