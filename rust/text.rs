//! Python `str` semantics, on text in two forms.
//!
//! The renderers' text is the bytes of `s.encode("utf-8", "surrogatepass")`:
//! valid UTF-8, except that a lone surrogate is the 3-byte sequence
//! `ED A0..BF xx`. Byte order of such text is code-point order, so `sorted()`
//! is a byte sort. A `Native` text is a Python `str`'s own code units (PEP 393:
//! 1, 2 or 4 bytes a code point); the codecs here move between the two forms
//! with every code point kept, surrogates and NUL included.

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;

/// Number of code points, as Python's `len(str)`.
pub fn char_len(s: &[u8]) -> usize {
    // Every byte starts a code point except continuation bytes (0b10xxxxxx). Counting
    // them in u8 lanes over 64-byte chunks lets the compiler vectorise the loop.
    let mut continuation = 0;
    let mut chunks = s.chunks_exact(64);
    for chunk in &mut chunks {
        continuation += chunk.iter().map(|&b| u8::from(b & 0xC0 == 0x80)).sum::<u8>() as usize;
    }
    continuation += chunks.remainder().iter().filter(|&&b| b & 0xC0 == 0x80).count();
    s.len() - continuation
}

/// The lines of `s`, as Python's `s.split("\n")`.
pub fn lines(s: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = Some(s);
    std::iter::from_fn(move || {
        let text = rest?;
        match memchr::memchr(b'\n', text) {
            Some(at) => {
                rest = Some(&text[at + 1..]);
                Some(&text[..at])
            }
            None => {
                rest = None;
                Some(text)
            }
        }
    })
}

/// True for every code point for which Python's `str.isspace()` is true.
pub fn is_py_space(cp: u32) -> bool {
    matches!(
        cp,
        0x09..=0x0D
            | 0x1C..=0x20
            | 0x85
            | 0xA0
            | 0x1680
            | 0x2000..=0x200A
            | 0x2028
            | 0x2029
            | 0x202F
            | 0x205F
            | 0x3000
    )
}

/// The code point that starts at `s[0]` and its length in bytes.
fn decode_first(s: &[u8]) -> (u32, usize) {
    let b0 = s[0] as u32;
    // Text is valid surrogatepass UTF-8; a truncated sequence reads as zero bits, never out of bounds.
    let cont = |i: usize| s.get(i).map_or(0, |&b| (b & 0x3F) as u32);
    match b0 {
        0x00..=0x7F => (b0, 1),
        0xC0..=0xDF => (((b0 & 0x1F) << 6) | cont(1), 2.min(s.len())),
        0xE0..=0xEF => (((b0 & 0x0F) << 12) | (cont(1) << 6) | cont(2), 3.min(s.len())),
        _ => (((b0 & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3), 4.min(s.len())),
    }
}

/// The code point that ends at the end of `s` and its length in bytes.
fn decode_last(s: &[u8]) -> (u32, usize) {
    let mut start = s.len() - 1;
    while start > 0 && (s[start] as i8) < -0x40 {
        start -= 1;
    }
    decode_first(&s[start..])
}

/// Python's `str.strip()` with no argument.
pub fn strip(s: &[u8]) -> &[u8] {
    let mut s = s;
    // An ASCII byte at either end is a whole code point: nothing to decode.
    while let Some(&b) = s.first() {
        let (cp, n) = if b < 0x80 { (u32::from(b), 1) } else { decode_first(s) };
        if !is_py_space(cp) {
            break;
        }
        s = &s[n..];
    }
    while let Some(&b) = s.last() {
        let (cp, n) = if b < 0x80 { (u32::from(b), 1) } else { decode_last(s) };
        if !is_py_space(cp) {
            break;
        }
        s = &s[..s.len() - n];
    }
    s
}

/// Python's `str.rstrip("\n")`.
pub fn rstrip_newlines(s: &[u8]) -> &[u8] {
    let end = s.iter().rposition(|&b| b != b'\n').map_or(0, |i| i + 1);
    &s[..end]
}

/// Python's `s.strip().split("\n")[0].strip()`: the first line of a description.
pub fn first_line(s: &[u8]) -> &[u8] {
    let s = strip(s);
    strip(&s[..memchr::memchr(b'\n', s).unwrap_or(s.len())])
}

/// Python's `[p for p in s.split("/") if p]`: the non-empty path parts.
pub fn path_parts(s: &[u8]) -> PathParts<'_> {
    PathParts { s, from: 0, chunk: 0, slashes: 0, scanned: 0 }
}

/// The parts of a path, its slashes found a chunk at a time (labels are a few chunks
/// long; a byte loop costs several instructions a byte, a search's set-up more than a chunk).
pub struct PathParts<'a> {
    s: &'a [u8],
    /// Where the next part starts.
    from: usize,
    /// Where the chunk of `slashes` starts.
    chunk: usize,
    /// Bit `k` for a `/` at `chunk + k` not yet reached.
    slashes: u32,
    /// How far chunks were searched.
    scanned: usize,
}

impl PathParts<'_> {
    /// Where the next slash is, or the end of the text once (then `None`).
    fn next_end(&mut self) -> Option<usize> {
        while self.slashes == 0 {
            let len = self.s.len();
            if self.scanned >= len {
                // The end of the text ends the last part, once.
                return (self.from <= len).then_some(len);
            }
            // Past the last whole chunk, the text's last chunk is searched again, the bits of
            // units searched already shifted out, and a text shorter than a chunk a byte at a
            // time: a copy into a zeroed chunk, read back at once, would wait on its stores.
            let slashes = match (self.s.get(self.scanned..).and_then(<[u8]>::first_chunk), self.s.last_chunk()) {
                (Some(chunk), _) => u8::equal_in_chunk(chunk, b'/'),
                (None, Some(last)) => u8::equal_in_chunk(last, b'/') >> (self.scanned + CHUNK - len),
                (None, None) => self.s.iter().rev().fold(0, |bits, &b| bits << 1 | u32::from(b == b'/')),
            };
            (self.chunk, self.slashes) = (self.scanned, slashes);
            self.scanned += CHUNK;
        }
        let at = self.chunk + self.slashes.trailing_zeros() as usize;
        self.slashes &= self.slashes - 1;
        Some(at)
    }
}

impl<'a> Iterator for PathParts<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        loop {
            let end = self.next_end()?;
            let part = self.s.get(self.from..end).unwrap_or_default();
            self.from = end + 1;
            if !part.is_empty() {
                return Some(part);
            }
        }
    }
}

/// The width class of a Python `str`: the smallest kind that holds its largest code point.
/// CPython's strings are canonical, so two equal strings have the same class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Class {
    #[default]
    Ascii,
    Latin1,
    Ucs2,
    Ucs4,
}

impl Class {
    /// The `maxchar` to give `PyUnicode_New` for a string of this class.
    pub fn max_char(self) -> u32 {
        match self {
            Class::Ascii => 0x7F,
            Class::Latin1 => 0xFF,
            Class::Ucs2 => 0xFFFF,
            Class::Ucs4 => 0x10FFFF,
        }
    }

    /// The class of surrogatepass UTF-8 whose largest byte is `max_byte`: the lead byte of
    /// the largest code point decides (continuation bytes are below every multi-byte lead).
    fn of_max_byte(max_byte: u8) -> Self {
        match max_byte {
            0x00..=0x7F => Class::Ascii,
            0x80..=0xC3 => Class::Latin1,
            0xC4..=0xEF => Class::Ucs2,
            _ => Class::Ucs4,
        }
    }
}

/// Code points and width class of surrogatepass UTF-8, in one vectorisable pass.
pub fn measure(s: &[u8]) -> (usize, Class) {
    let (mut continuation, mut max) = (0usize, 0u8);
    let mut chunks = s.chunks_exact(64);
    for chunk in &mut chunks {
        continuation += chunk.iter().map(|&b| u8::from(b & 0xC0 == 0x80)).sum::<u8>() as usize;
        max = max.max(chunk.iter().fold(0, |m, &b| m.max(b)));
    }
    for &b in chunks.remainder() {
        continuation += usize::from(b & 0xC0 == 0x80);
        max = max.max(b);
    }
    (s.len() - continuation, Class::of_max_byte(max))
}

/// A Python `str`'s code units, borrowed in their own width, with the string's class.
#[derive(Debug, Clone, Copy)]
pub struct Native<'a> {
    pub units: Units<'a>,
    /// Exact for a whole `str` (canonical); for a part of one, at least its class.
    pub class: Class,
}

/// Code units of one width: Latin-1 bytes, UCS-2 or UCS-4.
#[derive(Debug, Clone, Copy)]
pub enum Units<'a> {
    One(&'a [u8]),
    Two(&'a [u16]),
    Four(&'a [u32]),
}

impl<'a> Native<'a> {
    /// Number of code points, as Python's `len(str)`.
    pub fn len(&self) -> usize {
        match self.units {
            Units::One(u) => u.len(),
            Units::Two(u) => u.len(),
            Units::Four(u) => u.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Python's `s.startswith(prefix)` for an ASCII `prefix`, read in the text's own width.
    pub fn starts_with_ascii(&self, prefix: &[u8]) -> bool {
        fn starts<T: Copy + Into<u32>>(units: &[T], prefix: &[u8]) -> bool {
            units.len() >= prefix.len() && units.iter().zip(prefix).all(|(&u, &b)| u.into() == u32::from(b))
        }
        match self.units {
            Units::One(u) => u.starts_with(prefix),
            Units::Two(u) => starts(u, prefix),
            Units::Four(u) => starts(u, prefix),
        }
    }

    /// How many of its code units are `\n`.
    pub fn count_newlines(&self) -> usize {
        match self.units {
            Units::One(u) => u8::count_newlines(u),
            Units::Two(u) => u16::count_newlines(u),
            Units::Four(u) => u32::count_newlines(u),
        }
    }

    /// The lines of the text, as Python's `s.split("\n")`. Each keeps the whole text's class:
    /// exact for the lines together (they hold every code point but the newlines).
    pub fn lines(self) -> impl Iterator<Item = Native<'a>> {
        let class = self.class;
        let mut rest = Some(self.units);
        std::iter::from_fn(move || {
            let units = rest?;
            let (line, after) = match units {
                Units::One(u) => split_line(u, u8::find_newline),
                Units::Two(u) => split_line(u, u16::find_newline),
                Units::Four(u) => split_line(u, u32::find_newline),
            };
            rest = after;
            Some(Native { units: line, class })
        })
    }

    /// Where the needle of `finder` (ASCII, not empty) first occurs at or after code unit `from`.
    pub fn find_ascii(&self, finder: &memchr::memmem::Finder<'_>, from: usize) -> Option<usize> {
        let at = match self.units {
            // Latin-1 bytes hold ASCII as themselves.
            Units::One(u) => finder.find(u.get(from..)?),
            Units::Two(u) => find_ascii_in(u.get(from..)?, finder.needle()),
            Units::Four(u) => find_ascii_in(u.get(from..)?, finder.needle()),
        };
        at.map(|i| from + i)
    }

    /// Whether both hold the same code points, whatever their widths.
    pub fn same_text(self, other: Native<'_>) -> bool {
        fn same<A: Copy + Into<u32>, B: Copy + Into<u32>>(a: &[A], b: &[B]) -> bool {
            a.len() == b.len() && a.iter().zip(b).all(|(&x, &y)| x.into() == y.into())
        }
        match (self.units, other.units) {
            (Units::One(a), Units::One(b)) => a == b,
            (Units::Two(a), Units::Two(b)) => a == b,
            (Units::Four(a), Units::Four(b)) => a == b,
            (Units::One(a), Units::Two(b)) => same(a, b),
            (Units::One(a), Units::Four(b)) => same(a, b),
            (Units::Two(a), Units::One(b)) => same(a, b),
            (Units::Two(a), Units::Four(b)) => same(a, b),
            (Units::Four(a), Units::One(b)) => same(a, b),
            (Units::Four(a), Units::Two(b)) => same(a, b),
        }
    }

    /// Where ASCII `needle` (not empty) last occurs, in code units.
    pub fn rfind_ascii(&self, needle: &[u8]) -> Option<usize> {
        fn rfind<T: Copy + Into<u32>>(units: &[T], needle: &[u8]) -> Option<usize> {
            let last = units.len().checked_sub(needle.len())?;
            (0..=last).rev().find(|&at| units[at..].iter().zip(needle).all(|(&u, &b)| u.into() == u32::from(b)))
        }
        match self.units {
            Units::One(u) => memchr::memmem::rfind(u, needle),
            Units::Two(u) => rfind(u, needle),
            Units::Four(u) => rfind(u, needle),
        }
    }

    /// Code units `start..end` (empty when out of range), with the whole text's class.
    pub fn slice(self, start: usize, end: usize) -> Native<'a> {
        let units = match self.units {
            Units::One(u) => Units::One(u.get(start..end).unwrap_or_default()),
            Units::Two(u) => Units::Two(u.get(start..end).unwrap_or_default()),
            Units::Four(u) => Units::Four(u.get(start..end).unwrap_or_default()),
        };
        Native { units, class: self.class }
    }

    /// Python's `s.rstrip("\n")`, in place.
    pub fn rstrip_newlines(self) -> Native<'a> {
        fn end<T: Copy + Into<u32>>(units: &[T]) -> usize {
            units.iter().rposition(|&u| u.into() != 0x0A).map_or(0, |i| i + 1)
        }
        let units = match self.units {
            Units::One(u) => Units::One(&u[..end(u)]),
            Units::Two(u) => Units::Two(&u[..end(u)]),
            Units::Four(u) => Units::Four(&u[..end(u)]),
        };
        Native { units, class: self.class }
    }

    /// The text as surrogatepass UTF-8, encoded into `buf` (at least `ENCODE_ROOM` bytes):
    /// each time it is nearly full it is handed to `each`, and what it holds at the end
    /// (its first bytes, their number returned) is left for the caller.
    pub fn utf8_chunks(&self, buf: &mut [u8], mut each: impl FnMut(&[u8])) -> usize {
        if let (Units::One(bytes), Class::Ascii) = (self.units, self.class) {
            // ASCII is its own UTF-8.
            each(bytes);
            return 0;
        }
        match self.units {
            Units::One(u) => latin1_chunks(u, buf, each),
            Units::Two(u) => encode_chunks(u, buf, 0, each),
            Units::Four(u) => encode_chunks(u, buf, 0, each),
        }
    }
}

/// The room `encode_chunks` needs for one chunk: four bytes a unit, and the 16 narrowed
/// units stored after each unit that is not ASCII (`encode_mixed`).
pub const ENCODE_ROOM: usize = 5 * CHUNK;

/// Latin-1 text read this many bytes at a time: a block that is all ASCII is its own UTF-8.
const LATIN1_BLOCK: usize = 4096;

/// `Native::utf8_chunks` of Latin-1 text: a block that is all ASCII is handed to `each`
/// as it is, not copied; the others are encoded.
fn latin1_chunks(bytes: &[u8], buf: &mut [u8], mut each: impl FnMut(&[u8])) -> usize {
    let mut n = 0;
    for block in bytes.chunks(LATIN1_BLOCK) {
        if is_ascii(block) {
            if n > 0 {
                each(&buf[..n]);
                n = 0;
            }
            each(block);
        } else {
            n = encode_chunks(block, buf, n, &mut each);
        }
    }
    n
}

/// Whether every byte is ASCII: by AVX2 where the CPU has it.
fn is_ascii(bytes: &[u8]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if avx2::available() {
        // SAFETY: the CPU has AVX2.
        return unsafe { avx2::is_ascii(bytes) };
    }
    bytes.is_ascii()
}

/// Encodes code units as surrogatepass UTF-8 into `buf` (at least `ENCODE_ROOM` bytes),
/// after the `n` bytes it holds, as `Native::utf8_chunks` does. A chunk is narrowed to
/// bytes and tested at once: an ASCII chunk is stored as it is, about one instruction a unit.
fn encode_chunks<T: CodeUnit>(units: &[T], buf: &mut [u8], mut n: usize, mut each: impl FnMut(&[u8])) -> usize {
    debug_assert!(buf.len() >= ENCODE_ROOM);
    let mut i = 0;
    loop {
        let (read, written) = encode_while_room(&units[i..], &mut buf[n..]);
        (i, n) = (i + read, n + written);
        // Fewer units than a chunk left, or no room even in an empty buffer (shorter than
        // `ENCODE_ROOM`): the rest a unit at a time.
        if units.len() - i < CHUNK || n == 0 {
            break;
        }
        each(&buf[..n]);
        n = 0;
    }
    for &u in &units[i..] {
        if n + 4 > buf.len() {
            each(&buf[..n]);
            n = 0;
        }
        n += encode(u.into(), &mut buf[n..]);
    }
    n
}

/// Chunks encoded together by `encode_while_room`: one test for four ASCII chunks.
const BLOCK: usize = 4 * CHUNK;

/// Encodes whole groups, then whole chunks, of `units` into `buf` while it has room for one
/// more: the units read and the bytes written.
fn encode_while_room<T: CodeUnit>(units: &[T], buf: &mut [u8]) -> (usize, usize) {
    let (i, n) = T::encode_groups(units, buf);
    let (read, written) = chunks_while_room(&units[i..], &mut buf[n..]);
    (i + read, n + written)
}

/// Encodes whole chunks of `units` into `buf` while it has room for one more: the units
/// read and the bytes written. Four chunks at a time, then one.
fn chunks_while_room<T: CodeUnit>(units: &[T], buf: &mut [u8]) -> (usize, usize) {
    let (mut i, mut n) = (0, 0);
    while let (Some(block), Some(out)) =
        (units.get(i..).and_then(<[T]>::first_chunk::<BLOCK>), buf.get_mut(n..n + 4 * ENCODE_ROOM))
    {
        // Every chunk is there (the block is whole); a missing one would be encoded unit by unit.
        let narrowed: [([u8; CHUNK], u32); 4] = std::array::from_fn(|k| {
            block[k * CHUNK..].first_chunk::<CHUNK>().map_or(([0; CHUNK], 0xFFFF), T::narrow_chunk)
        });
        if narrowed.iter().fold(0, |m, (_, mask)| m | mask) == 0 {
            for (k, (bytes, _)) in narrowed.iter().enumerate() {
                out[k * CHUNK..(k + 1) * CHUNK].copy_from_slice(bytes);
            }
            n += BLOCK;
        } else {
            let mut at = 0;
            for (k, &(bytes, mask)) in narrowed.iter().enumerate() {
                at += encode_chunk(&units[i + k * CHUNK..], bytes, mask, &mut out[at..]);
            }
            n += at;
        }
        i += BLOCK;
    }
    while let (Some(chunk), Some(out)) =
        (units.get(i..).and_then(<[T]>::first_chunk::<CHUNK>), buf.get_mut(n..n + ENCODE_ROOM))
    {
        let (bytes, mask) = T::narrow_chunk(chunk);
        n += encode_chunk(&units[i..], bytes, mask, out);
        i += CHUNK;
    }
    (i, n)
}

/// The chunk that starts `units`, narrowed to `bytes` with its non-ASCII `mask`, into `out`
/// (`ENCODE_ROOM` long).
#[inline]
fn encode_chunk<T: CodeUnit>(units: &[T], bytes: [u8; CHUNK], mask: u32, out: &mut [u8]) -> usize {
    out[..CHUNK].copy_from_slice(&bytes);
    match mask {
        0 => CHUNK,
        _ => encode_mixed(units, mask, out),
    }
}

/// The chunk that starts `units`, holding units that are not ASCII (bit `k` of `mask` for
/// unit `k`), its narrowed bytes stored at the start of `out` (`ENCODE_ROOM` long) already:
/// the bytes written. A few such units are each encoded where the bytes before it end, and
/// the 16 units after it narrowed again from the source and stored after it (not copied
/// from a stored copy: that load would wait for the store); with more, or no chunk after
/// this one, every unit is encoded on its own. Not inlined, so that the loop of ASCII
/// chunks keeps its registers.
#[inline(never)]
fn encode_mixed<T: CodeUnit>(units: &[T], mut mask: u32, out: &mut [u8]) -> usize {
    let (chunk, rest) = units.split_at(CHUNK);
    if mask.count_ones() > 4 || rest.len() < CHUNK {
        return chunk.iter().fold(0, |n, &u| n + encode(u.into(), &mut out[n..]));
    }
    let mut shift = 0;
    while mask != 0 {
        let at = mask.trailing_zeros() as usize;
        shift += encode(chunk[at].into(), &mut out[at + shift..]) - 1;
        if let Some(after) = units[at + 1..].first_chunk::<CHUNK>() {
            out[at + 1 + shift..][..CHUNK].copy_from_slice(&T::narrow_chunk(after).0);
        }
        mask &= mask - 1;
    }
    CHUNK + shift
}

/// Where ASCII `needle` (not empty) first occurs in `units`: candidates for its first byte
/// found 16 units at a time by SIMD, the units after the last whole chunk one by one.
fn find_ascii_in<T: CodeUnit>(units: &[T], needle: &[u8]) -> Option<usize> {
    let (&first, rest) = needle.split_first()?;
    let last_start = units.len().checked_sub(needle.len())?;
    let found_at = |start: usize| {
        let tail = units.get(start + 1..start + needle.len()).unwrap_or_default();
        tail.len() == rest.len() && tail.iter().zip(rest).all(|(&u, &b)| u.into() == u32::from(b))
    };
    let mut chunk_start = 0;
    while let Some(chunk) = units.get(chunk_start..).and_then(<[T]>::first_chunk::<CHUNK>) {
        let mut mask = T::equal_in_chunk(chunk, first);
        while mask != 0 {
            let start = chunk_start + mask.trailing_zeros() as usize;
            if start > last_start {
                return None;
            }
            if found_at(start) {
                return Some(start);
            }
            mask &= mask - 1;
        }
        chunk_start += CHUNK;
    }
    (chunk_start..=last_start).find(|&start| units[start].into() == u32::from(first) && found_at(start))
}

/// How many of `units` are `unit`, counted in chunks small enough for a `u16` a lane (a loop the compiler vectorises).
fn count_in_lanes<T: Copy + PartialEq>(units: &[T], unit: T) -> usize {
    units.chunks(u16::MAX as usize).map(|c| c.iter().fold(0u16, |n, &u| n + u16::from(u == unit)) as usize).sum()
}

/// Code units searched for a newline at once: one SSE2 register of bytes.
pub const CHUNK: usize = 16;

/// A code unit of a `str` in one of its three widths.
pub trait CodeUnit: Copy + Into<u32> {
    /// Where the first `\n` is.
    fn find_newline(units: &[Self]) -> Option<usize>;
    /// How many units are `\n`.
    fn count_newlines(units: &[Self]) -> usize;
    /// Where the first `\n` of a chunk is, found without a loop (a line is often shorter
    /// than a SIMD search's set-up).
    fn newline_in_chunk(chunk: &[Self; CHUNK]) -> Option<usize>;
    /// The chunk narrowed to bytes (exact for its ASCII units), and a mask with bit `k`
    /// set where unit `k` is not ASCII.
    fn narrow_chunk(chunk: &[Self; CHUNK]) -> ([u8; CHUNK], u32);
    /// A mask with bit `k` set where unit `k` of the chunk is `ascii`.
    fn equal_in_chunk(chunk: &[Self; CHUNK], ascii: u8) -> u32;
    /// Encodes the first units of `units` into `buf` by wider SIMD than a chunk, where the
    /// CPU has it: the units read and the bytes written (none at all without it).
    fn encode_groups(_units: &[Self], _buf: &mut [u8]) -> (usize, usize) {
        (0, 0)
    }
}

/// `CodeUnit::count_newlines` by AVX2 where the CPU has it.
macro_rules! count_newlines_avx2 {
    () => {
        fn count_newlines(units: &[Self]) -> usize {
            #[cfg(target_arch = "x86_64")]
            if avx2::available() {
                // SAFETY: the CPU has AVX2.
                return unsafe { avx2::count(units, b'\n') };
            }
            count_in_lanes(units, 0x0A)
        }
    };
}

/// `CodeUnit::encode_groups` for a width that AVX2 encodes.
macro_rules! encode_groups_avx2 {
    () => {
        fn encode_groups(units: &[Self], buf: &mut [u8]) -> (usize, usize) {
            #[cfg(target_arch = "x86_64")]
            if avx2::available() {
                // SAFETY: the CPU has what `avx2` needs, and what `avx512` needs when it says so.
                return unsafe {
                    match avx512::available() {
                        true => avx2::encode_groups::<_, true>(units, buf),
                        false => avx2::encode_groups::<_, false>(units, buf),
                    }
                };
            }
            let _ = (units, buf);
            (0, 0)
        }
    };
}

/// `equal_in_chunk` where there is no SSE2: unit by unit.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn equal_units<U: CodeUnit>(chunk: &[U; CHUNK], ascii: u8) -> u32 {
    chunk.iter().enumerate().fold(0, |m, (k, &u)| m | u32::from(u.into() == u32::from(ascii)) << k)
}

/// `narrow_chunk` where there is no SSE2: unit by unit.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn narrow_units<U: CodeUnit>(chunk: &[U; CHUNK]) -> ([u8; CHUNK], u32) {
    let mask = chunk.iter().enumerate().fold(0, |m, (k, &u)| m | u32::from(u.into() >= 0x80) << k);
    (chunk.map(|u| u.into() as u8), mask)
}

/// The first of the `bits`-wide lanes of `v` (lowest first) that equals `\n`.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn newline_lane(v: u64, bits: u32) -> Option<u32> {
    let ones = u64::MAX / ((1u64 << bits) - 1);
    let v = v ^ (ones * 0x0A);
    // The lowest zero lane is exactly the lowest bit set here: a borrow only reaches higher lanes.
    let zero = v.wrapping_sub(ones) & !v & (ones << (bits - 1));
    (zero != 0).then(|| zero.trailing_zeros() / bits)
}

/// `newline_in_chunk` where there is no SSE2: the chunk as 64-bit words, a lane a unit.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn newline_in_words<U: CodeUnit>(chunk: &[U; CHUNK]) -> Option<usize> {
    let bits = 8 * std::mem::size_of::<U>() as u32;
    let lanes = (64 / bits) as usize;
    chunk.chunks(lanes).enumerate().find_map(|(w, units)| {
        let word = units.iter().rev().fold(0u64, |v, &u| (v << bits) | u64::from(u.into()));
        newline_lane(word, bits).map(|lane| w * lanes + lane as usize)
    })
}

/// The first newline of a chunk from a mask with bit `k` set where unit `k` is `\n`.
#[cfg(target_arch = "x86_64")]
fn first_set(mask: i32) -> Option<usize> {
    (mask != 0).then(|| mask.trailing_zeros() as usize)
}

/// Masks of a chunk in each width: compare 16 units to an ASCII unit, narrow the lanes to
/// bytes (saturating: all ones stay all ones), and take each byte's top bit.
#[cfg(target_arch = "x86_64")]
mod sse2 {
    use super::CHUNK;
    use std::arch::x86_64::{
        __m128i, _mm_adds_epu16, _mm_cmpeq_epi16, _mm_cmpeq_epi32, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8,
        _mm_packs_epi16, _mm_packs_epi32, _mm_packus_epi16, _mm_set1_epi16, _mm_set1_epi32, _mm_set1_epi8,
    };

    /// A chunk narrowed to bytes and its non-ASCII mask, in each width. Wide units are
    /// packed with unsigned saturation (exact below 0x80); the mask is the top bit of each
    /// unit plus 0x7F80, saturated, then packed with signed saturation (set from 0x80 up).
    pub fn narrow_one(chunk: &[u8; CHUNK]) -> ([u8; CHUNK], u32) {
        // SAFETY: SSE2 is part of x86-64; the unaligned load reads the chunk's own 16 bytes.
        unsafe { (*chunk, _mm_movemask_epi8(_mm_loadu_si128(chunk.as_ptr().cast())) as u32) }
    }

    pub fn narrow_two(chunk: &[u16; CHUNK]) -> ([u8; CHUNK], u32) {
        let at = chunk.as_ptr().cast::<__m128i>();
        // SAFETY: SSE2 is part of x86-64; the unaligned loads read the chunk's own 32 bytes.
        unsafe { narrow_halves(_mm_loadu_si128(at), _mm_loadu_si128(at.add(1))) }
    }

    pub fn narrow_four(chunk: &[u32; CHUNK]) -> ([u8; CHUNK], u32) {
        let at = chunk.as_ptr().cast::<__m128i>();
        // SAFETY: SSE2 is part of x86-64; the unaligned loads read the chunk's own 64 bytes.
        unsafe {
            // Code points fit 31 bits: signed saturation keeps those below 0x8000, caps the rest.
            let half = |k| _mm_packs_epi32(_mm_loadu_si128(at.add(k)), _mm_loadu_si128(at.add(k + 1)));
            narrow_halves(half(0), half(2))
        }
    }

    /// 16 units as two vectors of 16-bit lanes, narrowed, with their mask.
    unsafe fn narrow_halves(lo: __m128i, hi: __m128i) -> ([u8; CHUNK], u32) {
        let bytes: [u8; CHUNK] = std::mem::transmute(_mm_packus_epi16(lo, hi));
        let high = |v| _mm_adds_epu16(v, _mm_set1_epi16(0x7F80));
        (bytes, _mm_movemask_epi8(_mm_packs_epi16(high(lo), high(hi))) as u32)
    }

    pub fn one(chunk: &[u8; CHUNK], ascii: u8) -> i32 {
        // SAFETY: SSE2 is part of x86-64; the unaligned load reads the chunk's own 16 bytes.
        unsafe { _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(chunk.as_ptr().cast()), _mm_set1_epi8(ascii as i8))) }
    }

    pub fn two(chunk: &[u16; CHUNK], ascii: u8) -> i32 {
        let at = chunk.as_ptr().cast::<__m128i>();
        // SAFETY: SSE2 is part of x86-64; the unaligned loads read the chunk's own 32 bytes.
        unsafe {
            let eq = |k| _mm_cmpeq_epi16(_mm_loadu_si128(at.add(k)), _mm_set1_epi16(i16::from(ascii)));
            _mm_movemask_epi8(_mm_packs_epi16(eq(0), eq(1)))
        }
    }

    pub fn four(chunk: &[u32; CHUNK], ascii: u8) -> i32 {
        let at = chunk.as_ptr().cast::<__m128i>();
        // SAFETY: SSE2 is part of x86-64; the unaligned loads read the chunk's own 64 bytes.
        unsafe {
            let eq = |k| _mm_cmpeq_epi32(_mm_loadu_si128(at.add(k)), _mm_set1_epi32(i32::from(ascii)));
            _mm_movemask_epi8(_mm_packs_epi16(_mm_packs_epi32(eq(0), eq(1)), _mm_packs_epi32(eq(2), eq(3))))
        }
    }
}

/// One `newline_in_chunk`, `narrow_chunk` and `equal_in_chunk` for each width: SSE2 on x86-64, words or a scan elsewhere.
macro_rules! chunk_masks {
    ($equal:ident, $narrow:ident) => {
        fn newline_in_chunk(chunk: &[Self; CHUNK]) -> Option<usize> {
            #[cfg(target_arch = "x86_64")]
            return first_set(sse2::$equal(chunk, b'\n'));
            #[cfg(not(target_arch = "x86_64"))]
            return newline_in_words(chunk);
        }

        fn equal_in_chunk(chunk: &[Self; CHUNK], ascii: u8) -> u32 {
            #[cfg(target_arch = "x86_64")]
            return sse2::$equal(chunk, ascii) as u32;
            #[cfg(not(target_arch = "x86_64"))]
            return equal_units(chunk, ascii);
        }

        fn narrow_chunk(chunk: &[Self; CHUNK]) -> ([u8; CHUNK], u32) {
            #[cfg(target_arch = "x86_64")]
            return sse2::$narrow(chunk);
            #[cfg(not(target_arch = "x86_64"))]
            return narrow_units(chunk);
        }
    };
}

impl CodeUnit for u8 {
    fn find_newline(units: &[Self]) -> Option<usize> {
        memchr::memchr(b'\n', units)
    }
    count_newlines_avx2!();
    chunk_masks!(one, narrow_one);
    encode_groups_avx2!();
}

impl CodeUnit for u16 {
    fn find_newline(units: &[Self]) -> Option<usize> {
        find_unit(units, b'\n')
    }
    count_newlines_avx2!();
    chunk_masks!(two, narrow_two);
    encode_groups_avx2!();
}

impl CodeUnit for u32 {
    fn find_newline(units: &[Self]) -> Option<usize> {
        find_unit(units, b'\n')
    }
    count_newlines_avx2!();
    chunk_masks!(four, narrow_four);
    encode_groups_avx2!();
}

/// Where `ascii` first occurs in `units`: 16 units compared at once by SIMD, the units
/// after the last whole chunk one by one.
fn find_unit<T: CodeUnit>(units: &[T], ascii: u8) -> Option<usize> {
    let mut start = 0;
    while let Some(chunk) = units.get(start..).and_then(<[T]>::first_chunk::<CHUNK>) {
        let mask = T::equal_in_chunk(chunk, ascii);
        if mask != 0 {
            return Some(start + mask.trailing_zeros() as usize);
        }
        start += CHUNK;
    }
    units.get(start..)?.iter().position(|&u| u.into() == u32::from(ascii)).map(|i| start + i)
}

/// The line before the first newline (found by `find`), and the rest after it.
fn split_line<'a, T>(units: &'a [T], find: impl Fn(&[T]) -> Option<usize>) -> (Units<'a>, Option<Units<'a>>)
where
    &'a [T]: Into<Units<'a>>,
{
    match find(units) {
        Some(at) => (units[..at].into(), Some(units[at + 1..].into())),
        None => (units.into(), None),
    }
}

impl<'a> From<&'a [u8]> for Units<'a> {
    fn from(u: &'a [u8]) -> Self {
        Units::One(u)
    }
}

impl<'a> From<&'a [u16]> for Units<'a> {
    fn from(u: &'a [u16]) -> Self {
        Units::Two(u)
    }
}

impl<'a> From<&'a [u32]> for Units<'a> {
    fn from(u: &'a [u32]) -> Self {
        Units::Four(u)
    }
}

/// `cp` as UTF-8 (a surrogate as its 3-byte form) in a little-endian word, and how many of
/// its bytes count.
#[inline]
fn utf8_word(cp: u32) -> (u32, usize) {
    if cp < 0x80 {
        (cp, 1)
    } else if cp < 0x800 {
        (0x80C0 | cp >> 6 | (cp & 0x3F) << 8, 2)
    } else if cp < 0x1_0000 {
        (0x80_80E0 | cp >> 12 | (cp >> 6 & 0x3F) << 8 | (cp & 0x3F) << 16, 3)
    } else {
        (0x8080_80F0 | cp >> 18 | (cp >> 12 & 0x3F) << 8 | (cp >> 6 & 0x3F) << 16 | (cp & 0x3F) << 24, 4)
    }
}

/// Writes `cp` as UTF-8 (a surrogate as its 3-byte form) into `buf`, which has room for
/// four bytes (all four are stored, as one word); returns the bytes that count.
fn encode(cp: u32, buf: &mut [u8]) -> usize {
    let (word, len) = utf8_word(cp);
    if let Some(out) = buf.first_chunk_mut::<4>() {
        *out = word.to_le_bytes();
    }
    len
}

/// A code unit of a `str` of some width.
pub trait Unit: Copy + Default {
    /// `cp` as a unit, `None` when it does not fit this width.
    fn from_cp(cp: u32) -> Option<Self>;
    /// Copies ASCII bytes, one unit each.
    fn copy_ascii(dst: &mut [Self], src: &[u8]);
    /// The largest code point in `units`.
    fn max_cp(units: &[Self]) -> u32;
    /// Copies `src` into the start of `dst`, widening; the number copied, or `None` when
    /// they do not fit (a wider source never fits: canonical output is at least as wide).
    fn copy_units(dst: &mut [Self], src: Units<'_>) -> Option<usize>;
}

/// `src` widened into the start of `dst` (a loop the compiler vectorises).
pub fn widen<S: Copy + Into<D>, D>(dst: &mut [D], src: &[S]) -> Option<usize> {
    let dst = dst.get_mut(..src.len())?;
    dst.iter_mut().zip(src).for_each(|(d, &s)| *d = s.into());
    Some(src.len())
}

/// `src` copied into the start of `dst`.
fn copy<T: Copy>(dst: &mut [T], src: &[T]) -> Option<usize> {
    dst.get_mut(..src.len())?.copy_from_slice(src);
    Some(src.len())
}

impl Unit for u8 {
    fn from_cp(cp: u32) -> Option<Self> {
        u8::try_from(cp).ok()
    }
    fn copy_ascii(dst: &mut [Self], src: &[u8]) {
        dst.copy_from_slice(src);
    }
    fn max_cp(units: &[Self]) -> u32 {
        units.iter().fold(0, |m, &c| m.max(c)).into()
    }
    fn copy_units(dst: &mut [Self], src: Units<'_>) -> Option<usize> {
        match src {
            Units::One(s) => copy(dst, s),
            Units::Two(_) | Units::Four(_) => None,
        }
    }
}

impl Unit for u16 {
    fn from_cp(cp: u32) -> Option<Self> {
        u16::try_from(cp).ok()
    }
    fn copy_ascii(dst: &mut [Self], src: &[u8]) {
        dst.iter_mut().zip(src).for_each(|(d, &s)| *d = s.into());
    }
    fn max_cp(units: &[Self]) -> u32 {
        units.iter().fold(0, |m, &c| m.max(c)).into()
    }
    fn copy_units(dst: &mut [Self], src: Units<'_>) -> Option<usize> {
        match src {
            Units::One(s) => widen(dst, s),
            Units::Two(s) => copy(dst, s),
            Units::Four(_) => None,
        }
    }
}

impl Unit for u32 {
    fn from_cp(cp: u32) -> Option<Self> {
        Some(cp)
    }
    fn copy_ascii(dst: &mut [Self], src: &[u8]) {
        dst.iter_mut().zip(src).for_each(|(d, &s)| *d = s.into());
    }
    fn max_cp(units: &[Self]) -> u32 {
        units.iter().fold(0, |m, &c| m.max(c))
    }
    fn copy_units(dst: &mut [Self], src: Units<'_>) -> Option<usize> {
        match src {
            Units::One(s) => widen(dst, s),
            Units::Two(s) => widen(dst, s),
            Units::Four(s) => copy(dst, s),
        }
    }
}

/// The length of the ASCII run that starts `s`.
fn ascii_prefix(s: &[u8]) -> usize {
    let mut n = 0;
    for chunk in s.chunks(16) {
        if chunk.iter().fold(0, |m, &b| m | b) < 0x80 {
            n += chunk.len();
        } else {
            return n + chunk.iter().position(|&b| b >= 0x80).unwrap_or(0);
        }
    }
    n
}

/// Writes the code points of surrogatepass UTF-8 `src` into the start of `dst`; the
/// number written, or `None` when they do not fit (in number or in width).
pub fn decode_into<U: Unit>(src: &[u8], dst: &mut [U]) -> Option<usize> {
    if src.is_ascii() {
        U::copy_ascii(dst.get_mut(..src.len())?, src);
        return Some(src.len());
    }
    let (mut i, mut o) = (0, 0);
    while i < src.len() {
        let run = ascii_prefix(&src[i..]);
        if run > 0 {
            U::copy_ascii(dst.get_mut(o..o + run)?, &src[i..i + run]);
            (i, o) = (i + run, o + run);
            continue;
        }
        let (cp, n) = decode_first(&src[i..]);
        *dst.get_mut(o)? = U::from_cp(cp)?;
        (i, o) = (i + n, o + 1);
    }
    Some(o)
}

/// The code points of `s`, counted at compile time.
pub const fn const_chars(s: &str) -> usize {
    let (bytes, mut i, mut n) = (s.as_bytes(), 0, 0);
    while i < bytes.len() {
        n += (bytes[i] & 0xC0 != 0x80) as usize;
        i += 1;
    }
    n
}

/// The UCS-2 units of `s`, made at compile time, for a literal written into wide outputs
/// as it is (nothing decoded per call); `N` is `const_chars(s)`, and `s` must lie in the BMP.
pub const fn const_ucs2<const N: usize>(s: &str) -> [u16; N] {
    let (bytes, mut units, mut i, mut n) = (s.as_bytes(), [0u16; N], 0, 0);
    while i < bytes.len() {
        let b = bytes[i] as u16;
        let (unit, len) = match bytes[i] {
            0x00..=0x7F => (b, 1),
            0xC0..=0xDF => ((b & 0x1F) << 6 | (bytes[i + 1] as u16 & 0x3F), 2),
            0xE0..=0xEF => ((b & 0x0F) << 12 | (bytes[i + 1] as u16 & 0x3F) << 6 | (bytes[i + 2] as u16 & 0x3F), 3),
            _ => panic!("a literal outside the BMP has no UCS-2 units"),
        };
        units[n] = unit;
        (i, n) = (i + len, n + 1);
    }
    assert!(n == N, "N must be the literal's length in code points");
    units
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::out::OwnedUnits;

    fn py(s: &str) -> Vec<u8> {
        s.as_bytes().to_vec()
    }

    #[test]
    fn const_ucs2_is_the_literals_utf16() {
        const TEXT: &str = "a\u{e9}\u{2192}\u{ffff}\u{7f}\u{80}\u{7ff}\u{800}z";
        const UNITS: [u16; const_chars(TEXT)] = const_ucs2(TEXT);
        assert_eq!(UNITS.to_vec(), TEXT.encode_utf16().collect::<Vec<_>>());
        assert_eq!(const_chars(TEXT), TEXT.chars().count());
    }

    #[test]
    fn len_counts_code_points() {
        assert_eq!(char_len("a\u{e9}\u{1F600}".as_bytes()), 3);
        // A lone surrogate, as surrogatepass encodes it, is one code point.
        assert_eq!(char_len(&[b'a', 0xED, 0xA0, 0x80]), 2);
    }

    #[test]
    fn newlines_are_counted_in_every_width() {
        // Runs of newlines long enough to fill a byte lane past 255 (every step matching),
        // sparse ones, and every length around a group and the 255-step blocks.
        let block = 255 * 32;
        let mut texts: Vec<Vec<u32>> =
            (0..70).map(|n| (0..n).map(|i| if i % 3 == 0 { 0x0A } else { 0x61 }).collect()).collect();
        for len in [block - 1, block, block + 1, 2 * block + 37, 5 * block + 31] {
            texts.push(vec![0x0A; len]);
            texts.push((0..len as u32).map(|i| [0x0A, 0x0B, 0x8A, 0x10A, 0x0A0A][(i as usize * 7) % 5]).collect());
        }
        for text in &texts {
            let expected = text.iter().filter(|&&cp| cp == 0x0A).count();
            for units in in_every_width(text) {
                let counted = match &units {
                    OwnedUnits::Four(u) => u32::count_newlines(u),
                    OwnedUnits::Two(u) => u16::count_newlines(u),
                    OwnedUnits::One(u) => u8::count_newlines(u),
                };
                assert_eq!(counted, expected, "{} units", text.len());
            }
        }
    }

    #[test]
    fn a_newline_is_found_in_a_chunk_where_a_scan_finds_it() {
        // A newline (or none) at every place, among the units that trip a word-at-a-time
        // search: a borrow from 0x00, 0x0B and 0x09 beside 0x0A, high bits, 0x0A in a high
        // byte, a second newline after the first. The SIMD search and the word search agree.
        for at in 0..=CHUNK {
            for fill in [0x61u32, 0x0A, 0x0B, 0x09, 0x8A, 0x00, 0x01, 0xFF, 0x010A, 0xFF0A, 0x0A0B, 0x1_000A] {
                let wide: [u32; CHUNK] = std::array::from_fn(|i| if i == at { 0x0A } else { fill });
                let expected = |w: &[u32]| w.iter().position(|&u| u == 0x0A);
                let two: [u16; CHUNK] = wide.map(|u| u as u16);
                let one: [u8; CHUNK] = wide.map(|u| u as u8);
                let found = [
                    (u32::newline_in_chunk(&wide), newline_in_words(&wide), expected(&wide)),
                    (u16::newline_in_chunk(&two), newline_in_words(&two), expected(&two.map(u32::from))),
                    (u8::newline_in_chunk(&one), newline_in_words(&one), expected(&one.map(u32::from))),
                ];
                for (chunk, words, scan) in found {
                    assert_eq!((chunk, words), (scan, scan), "{at} {fill:#x}");
                }
            }
        }
    }

    #[test]
    fn a_unit_is_found_in_a_chunk_where_a_scan_finds_it() {
        // `{` (or none) at every place, among units equal to it in their low byte or low half.
        for at in 0..=CHUNK {
            for fill in [0x61u32, 0x7B, 0x7A, 0xFB, 0x017B, 0x7B00, 0xFF7B, 0x7B7B, 0x1_007B, 0x7B_0000, 0x00] {
                let wide: [u32; CHUNK] = std::array::from_fn(|i| if i == at { 0x7B } else { fill });
                let two: [u16; CHUNK] = wide.map(|u| u as u16);
                let one: [u8; CHUNK] = wide.map(|u| u as u8);
                assert_eq!(u32::equal_in_chunk(&wide, b'{'), equal_units(&wide, b'{'), "{at} {fill:#x}");
                assert_eq!(u16::equal_in_chunk(&two, b'{'), equal_units(&two, b'{'), "{at} {fill:#x}");
                assert_eq!(u8::equal_in_chunk(&one, b'{'), equal_units(&one, b'{'), "{at} {fill:#x}");
                let expected = (0..CHUNK).filter(|&i| wide[i] == 0x7B).fold(0, |m, i| m | 1 << i);
                assert_eq!(equal_units(&wide, b'{'), expected);
            }
        }
    }

    #[test]
    fn a_newline_is_found_in_a_wide_text_where_a_scan_finds_it() {
        // Every length across a few chunks, a newline (or none) at every place, among units
        // whose low byte or half is a newline.
        for len in 0..70 {
            for at in 0..=len {
                let wide: Vec<u32> =
                    (0..len).map(|i| if i == at { 0x0A } else { [0x61, 0x10A, 0x1_000A][i % 3] }).collect();
                let two: Vec<u16> = wide.iter().map(|&u| if u == 0x1_000A { 0x20 } else { u as u16 }).collect();
                assert_eq!(u32::find_newline(&wide), wide.iter().position(|&u| u == 0x0A), "{len} {at}");
                assert_eq!(u16::find_newline(&two), two.iter().position(|&u| u == 0x0A), "{len} {at}");
            }
        }
    }

    #[test]
    fn find_ascii_finds_what_a_scan_finds_in_every_width() {
        let finder = memchr::memmem::Finder::new(b"{CORE_MEMORY}");
        // Decoys: a wide unit whose low half is `{`, a needle cut short, braces doubled.
        let pieces = ["x", "{", "\u{1017B}", "\u{17B}", "{CORE_MEMOR", "{{CORE_MEMORY}", "\u{2192}", "{CORE_MEMORY}"];
        for n in 0..400usize {
            let text: String =
                (0..n % 23).map(|i| pieces[(n * 7 + i * 3) % pieces.len()]).collect::<String>() + &"y".repeat(n % 37);
            let cps: Vec<u32> = text.chars().map(u32::from).collect();
            let twos: Vec<u16> = cps.iter().map(|&c| c as u16).collect();
            let needle: Vec<u32> = "{CORE_MEMORY}".chars().map(u32::from).collect();
            for from in [0, 1, 5, 16] {
                let scan = (from..cps.len()).find(|&i| cps[i..].starts_with(&needle));
                assert_eq!(Native { units: Units::Four(&cps), class: Class::Ucs4 }.find_ascii(&finder, from), scan);
                if cps.iter().all(|&c| c < 0x1_0000) {
                    let two = Native { units: Units::Two(&twos), class: Class::Ucs2 };
                    assert_eq!(two.find_ascii(&finder, from), scan, "{text:?} {from}");
                }
            }
        }
    }

    #[test]
    fn starts_with_ascii_in_every_width() {
        let cases: [(&str, bool); 7] = [
            ("skills/x", true),
            ("skills/", true),
            ("skills", false),
            ("skillz/x", false),
            ("", false),
            // A wide code unit whose low byte is the prefix's byte is not that byte.
            ("\u{173}kills/", false),
            ("skills\u{12F}", false),
        ];
        for (text, expected) in cases {
            let cps: Vec<u32> = text.chars().map(u32::from).collect();
            let twos: Vec<u16> = cps.iter().map(|&c| c as u16).collect();
            let ones: Vec<u8> = cps.iter().map(|&c| c as u8).collect();
            assert_eq!(Native { units: Units::Four(&cps), class: Class::Ucs4 }.starts_with_ascii(b"skills/"), expected);
            assert_eq!(Native { units: Units::Two(&twos), class: Class::Ucs2 }.starts_with_ascii(b"skills/"), expected);
            if cps.iter().all(|&c| c < 0x100) {
                let one = Native { units: Units::One(&ones), class: Class::Latin1 };
                assert_eq!(one.starts_with_ascii(b"skills/"), expected);
            }
        }
    }

    #[test]
    fn native_lines_split_like_python() {
        let text: Vec<u16> = "a\n\n\u{e9}\u{2192}b\n".encode_utf16().collect();
        let lines: Vec<Vec<u16>> = Native { units: Units::Two(&text), class: Class::Ucs2 }
            .lines()
            .map(|l| match l.units {
                Units::Two(u) => u.to_vec(),
                _ => unreachable!(),
            })
            .collect();
        let expected: Vec<Vec<u16>> =
            "a\n\n\u{e9}\u{2192}b\n".split('\n').map(|l| l.encode_utf16().collect()).collect();
        assert_eq!(lines, expected);
    }

    #[test]
    fn lines_split_like_python() {
        assert_eq!(lines(b"a\n\nb\n").collect::<Vec<_>>(), vec![&b"a"[..], b"", b"b", b""]);
        assert_eq!(lines(b"").collect::<Vec<_>>(), vec![&b""[..]]);
    }

    #[test]
    fn strip_uses_python_whitespace() {
        assert_eq!(strip(&py("\u{1c}\u{85} x \u{3000}\u{1f}")), b"x");
        // U+200B is not whitespace in Python (nor U+180E).
        assert_eq!(strip(&py("\u{200b}x")), "\u{200b}x".as_bytes());
        assert_eq!(strip(&py(" \t\n ")), b"");
    }

    #[test]
    fn strip_reads_ascii_ends_as_decoding_does() {
        // Every pair of ends from whitespace and not, one and more bytes, lone surrogates too.
        let pieces: [&[u8]; 9] = [
            b" ",
            b"\t",
            b"\x1c",
            b"x",
            "\u{85}".as_bytes(),
            "\u{3000}".as_bytes(),
            "\u{e9}".as_bytes(),
            b"\xed\xa0\x80",
            b"",
        ];
        let decoding = |mut s: &[u8]| {
            while !s.is_empty() && is_py_space(decode_first(s).0) {
                s = &s[decode_first(s).1..];
            }
            while !s.is_empty() && is_py_space(decode_last(s).0) {
                s = &s[..s.len() - decode_last(s).1];
            }
            s.to_vec()
        };
        for a in pieces {
            for b in pieces {
                for c in pieces {
                    let s = [a, b, b"y", c, a].concat();
                    assert_eq!(strip(&s), decoding(&s), "{s:?}");
                    assert_eq!(strip(&[a, b, c].concat()), decoding(&[a, b, c].concat()));
                }
            }
        }
    }

    #[test]
    fn rstrip_newlines_only() {
        assert_eq!(rstrip_newlines(b"a \n\n"), b"a ");
        assert_eq!(rstrip_newlines(b"\n\n"), b"");
        assert_eq!(rstrip_newlines(b"a\r\n"), b"a\r");
    }

    #[test]
    fn native_rstrip_newlines_in_every_width() {
        for value in ["a \n\n", "\n\n", "a\r\n", "", "\u{e9}\n", "\u{2192}\n\u{2192}\n", "\u{1F600}\n\n\0"] {
            let expected: Vec<u32> = value.trim_end_matches('\n').chars().map(u32::from).collect();
            let cps: Vec<u32> = value.chars().map(u32::from).collect();
            let (ones, twos): (Vec<u8>, Vec<u16>) =
                (cps.iter().map(|&c| c as u8).collect(), cps.iter().map(|&c| c as u16).collect());
            let widths = [
                Native { units: Units::One(&ones), class: Class::Latin1 },
                Native { units: Units::Two(&twos), class: Class::Ucs2 },
                Native { units: Units::Four(&cps), class: Class::Ucs4 },
            ];
            let max = cps.iter().copied().max().unwrap_or(0);
            for native in widths.into_iter().filter(|n| n.class.max_char() >= max) {
                let got: Vec<u32> = match native.rstrip_newlines().units {
                    Units::One(u) => u.iter().map(|&c| c.into()).collect(),
                    Units::Two(u) => u.iter().map(|&c| c.into()).collect(),
                    Units::Four(u) => u.to_vec(),
                };
                assert_eq!(got, expected, "{value:?} {:?}", native.class);
            }
        }
    }

    #[test]
    fn a_chunk_is_narrowed_and_its_other_units_found_as_a_scan_finds_them() {
        // A non-ASCII unit (or none) at every place, or at every place from there on, among
        // units on both sides of 0x80 in each byte of a wide unit: SIMD and the scan agree on
        // the mask and on every ASCII byte.
        for at in 0..=CHUNK {
            for high in [0x80u32, 0xFF, 0x100, 0x7F7F, 0x8000, 0xD800, 0xFFFF, 0x1_0000, 0x10_FFFF, 0x7F00_0000] {
                for (fill, tail) in [(0x00u32, false), (0x41, false), (0x7F, false), (0x41, true)] {
                    let wide: [u32; CHUNK] =
                        std::array::from_fn(|i| if i == at || (tail && i > at) { high } else { fill + i as u32 % 2 });
                    let two: [u16; CHUNK] = wide.map(|u| u as u16);
                    let one: [u8; CHUNK] = wide.map(|u| u as u8);
                    let scan = |w: [u32; CHUNK]| {
                        let mask = w.iter().enumerate().fold(0u32, |m, (k, &u)| m | u32::from(u >= 0x80) << k);
                        (w.map(|u| if u < 0x80 { u as u8 } else { 0 }), mask)
                    };
                    let found = [
                        (u32::narrow_chunk(&wide), narrow_units(&wide), scan(wide)),
                        (u16::narrow_chunk(&two), narrow_units(&two), scan(two.map(u32::from))),
                        (u8::narrow_chunk(&one), narrow_units(&one), scan(one.map(u32::from))),
                    ];
                    for (chunk, units, (ascii, mask)) in found {
                        let kept = |(bytes, m): ([u8; CHUNK], u32)| {
                            (std::array::from_fn::<u8, CHUNK, _>(|k| if m >> k & 1 == 0 { bytes[k] } else { 0 }), m)
                        };
                        assert_eq!(
                            (kept(chunk), kept(units)),
                            ((ascii, mask), (ascii, mask)),
                            "{at} {high:#x} {fill:#x}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn utf8_chunks_encode_every_width_as_rust_does() {
        // Runs of ASCII of every length around 1-, 2-, 3- and 4-byte code points, across
        // chunk and buffer ends, in the narrowest width that holds them and every wider one.
        let pieces = ["\u{e9}", "\u{2192}", "\u{1F600}", "\0"];
        let text: String = (0..400).map(|i| format!("{}{}", "a".repeat(i % 41), pieces[i % 4])).collect();
        let latin1: String = (0..400).map(|i| format!("{}\u{ff}", "b".repeat(i % 37))).collect();
        let bmp: String = (0..400).map(|i| format!("{}{}", "c".repeat(i % 43), pieces[[0, 1, 3][i % 3]])).collect();
        // Chunks with few ASCII units, or none, and every count of other units.
        let dense: String = (0..600).map(|i| if i % (1 + i / 40) == 0 { "d" } else { pieces[i % 3] }).collect();
        // Latin-1 blocks all ASCII (handed over as they are) between blocks that are not.
        // The ASCII is not one letter repeated, so that text handed over out of order shows.
        let ascii = |n: usize| -> String { (0..n).map(|k| char::from(b'0' + (k % 75) as u8)).collect() };
        let sparse: String = (0..12).map(|i| format!("{}\u{e9}", ascii([9000, 4095, 4096, 5][i % 4]))).collect();
        let texts = [
            (text.as_str(), &[4][..]),
            (bmp.as_str(), &[2, 4][..]),
            (latin1.as_str(), &[1, 2, 4][..]),
            (dense.as_str(), &[4][..]),
            (sparse.as_str(), &[1, 2][..]),
        ];
        for (text, widths) in texts {
            let cps: Vec<u32> = text.chars().map(u32::from).collect();
            let (one, two): (Vec<u8>, Vec<u16>) =
                (cps.iter().map(|&c| c as u8).collect(), cps.iter().map(|&c| c as u16).collect());
            for &width in widths {
                let native = match width {
                    1 => Native { units: Units::One(&one), class: Class::Latin1 },
                    2 => Native { units: Units::Two(&two), class: Class::Ucs2 },
                    _ => Native { units: Units::Four(&cps), class: Class::Ucs4 },
                };
                for size in [ENCODE_ROOM, ENCODE_ROOM + 21, 4096] {
                    let (mut utf8, mut buf) = (Vec::new(), vec![0u8; size]);
                    let rest = native.utf8_chunks(&mut buf, |c| utf8.extend_from_slice(c));
                    utf8.extend_from_slice(&buf[..rest]);
                    assert!(utf8 == text.as_bytes(), "width {width}, buffer {size}");
                }
            }
        }
    }

    /// Code points as surrogatepass UTF-8, encoded plainly (the test's own encoder).
    fn surrogatepass(cps: &[u32]) -> Vec<u8> {
        let mut out = Vec::new();
        for &cp in cps {
            match cp {
                0..=0x7F => out.push(cp as u8),
                0x80..=0x7FF => out.extend([0xC0 | (cp >> 6) as u8, 0x80 | (cp & 0x3F) as u8]),
                0x800..=0xFFFF => {
                    out.extend([0xE0 | (cp >> 12) as u8, 0x80 | (cp >> 6 & 0x3F) as u8, 0x80 | (cp & 0x3F) as u8])
                }
                _ => out.extend([
                    0xF0 | (cp >> 18) as u8,
                    0x80 | (cp >> 12 & 0x3F) as u8,
                    0x80 | (cp >> 6 & 0x3F) as u8,
                    0x80 | (cp & 0x3F) as u8,
                ]),
            }
        }
        out
    }

    /// Code points of every UTF-8 length and at each length's edges, lone surrogates among
    /// them: one at every place of the first groups of texts that end around a group's end
    /// (where what follows a unit is short), then texts of every density.
    fn encoding_texts() -> Vec<Vec<u32>> {
        const POOL: [u32; 13] =
            [0, 0x7F, 0x80, 0xE9, 0x7FF, 0x800, 0x2192, 0xD800, 0xDFFF, 0xFFFF, 0x1_0000, 0x1F600, 0x10_FFFF];
        let mut texts: Vec<Vec<u32>> = Vec::new();
        for len in [1, 31, 32, 33, 63, 64, 65, 95, 96, 97, 130] {
            for at in 0..len {
                for cp in [0xE9, 0x2192, 0xDC00, 0x1F600] {
                    let mut text: Vec<u32> = (0..len).map(|k| u32::from(b'a') + (k % 26) as u32).collect();
                    text[at] = cp;
                    texts.push(text);
                }
            }
        }
        let mut seed = 7u32;
        let mut next = |n: u32| {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (seed >> 16) % n
        };
        // The pool, and its Latin-1 part alone (so that some texts are held in one byte a unit).
        for pool in [&POOL[..], &POOL[..4]] {
            for _ in 0..400 {
                let (density, len) = (next(34), next(400));
                let text = (0..len)
                    .map(|_| match next(32) < density {
                        true => pool[next(pool.len() as u32) as usize],
                        false => u32::from(b'a') + next(26),
                    })
                    .collect();
                texts.push(text);
            }
        }
        texts
    }

    /// `text` in each width that holds it: four bytes a unit, then two and one where they do.
    fn in_every_width(text: &[u32]) -> Vec<OwnedUnits> {
        let two: Option<Vec<u16>> = text.iter().map(|&cp| u16::try_from(cp).ok()).collect();
        let one: Option<Vec<u8>> = text.iter().map(|&cp| u8::try_from(cp).ok()).collect();
        [Some(OwnedUnits::Four(text.to_vec())), two.map(OwnedUnits::Two), one.map(OwnedUnits::One)]
            .into_iter()
            .flatten()
            .collect()
    }

    #[test]
    fn wide_units_encode_alone_few_or_many_at_every_place() {
        for text in &encoding_texts() {
            let expected = surrogatepass(text);
            for units in in_every_width(text) {
                let native = match &units {
                    OwnedUnits::Four(u) => Native { units: Units::Four(u), class: Class::Ucs4 },
                    OwnedUnits::Two(u) => Native { units: Units::Two(u), class: Class::Ucs2 },
                    OwnedUnits::One(u) => Native { units: Units::One(u), class: Class::Latin1 },
                };
                for size in [ENCODE_ROOM, 200, 333, 4096] {
                    let (mut utf8, mut buf) = (Vec::new(), vec![0u8; size]);
                    let rest = native.utf8_chunks(&mut buf, |c| utf8.extend_from_slice(c));
                    utf8.extend_from_slice(&buf[..rest]);
                    assert!(utf8 == expected, "{text:x?} in a buffer of {size}");
                }
            }
        }
    }

    /// Runs `one`, `two` and `four` on every text of `encoding_texts`, in each width that
    /// holds it.
    fn on_encoding_texts(one: fn(&[u8]), two: fn(&[u16]), four: fn(&[u32])) {
        for text in &encoding_texts() {
            for units in in_every_width(text) {
                match &units {
                    OwnedUnits::Four(u) => four(u),
                    OwnedUnits::Two(u) => two(u),
                    OwnedUnits::One(u) => one(u),
                }
            }
        }
    }

    /// Checks that `encoder` leaves fewer than `whole` of `units` and writes the UTF-8 of
    /// those it reads.
    fn check_encoder<T: CodeUnit>(
        name: &str,
        units: &[T],
        whole: usize,
        encoder: impl FnOnce(&[T], &mut [u8]) -> (usize, usize),
    ) {
        let mut buf = vec![0u8; 4 * units.len() + 4096];
        let (read, written) = encoder(units, &mut buf);
        let cps: Vec<u32> = units[..read].iter().map(|&u| u.into()).collect();
        assert!(units.len() - read < whole, "{name} left {} of {} units", units.len() - read, units.len());
        assert!(buf[..written] == surrogatepass(&cps), "{name}: {cps:x?}");
    }

    /// The AVX2 group encoder with and without its AVX-512 groups, each where the CPU has
    /// it: `utf8_chunks` above takes only the one this CPU chooses.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn group_encoders_encode_as_utf8() {
        fn check<T: avx2::Wide>(units: &[T]) {
            if avx2::available() {
                // SAFETY: the CPU has what the encoder needs (asked here).
                check_encoder("avx2", units, avx2::GROUP, |u, b| unsafe { avx2::encode_groups::<T, false>(u, b) });
                if avx512::available() {
                    // SAFETY: as above.
                    check_encoder("avx512", units, avx2::GROUP, |u, b| unsafe { avx2::encode_groups::<T, true>(u, b) });
                }
            }
        }
        on_encoding_texts(check::<u8>, check::<u16>, check::<u32>);
    }

    /// The chunk encoder alone, as CPUs without AVX2 run it: `utf8_chunks` above gives it
    /// only what the group encoder leaves where the CPU has AVX2.
    #[test]
    fn chunk_encoder_encodes_as_utf8() {
        fn check<T: CodeUnit>(units: &[T]) {
            check_encoder("chunks", units, CHUNK, chunks_while_room);
        }
        on_encoding_texts(check::<u8>, check::<u16>, check::<u32>);
    }

    #[test]
    fn texts_compare_and_are_searched_across_widths() {
        let text = "a\u{e9}\n\n<m>\u{2192}\n\n<m>";
        let cps: Vec<u32> = text.chars().map(u32::from).collect();
        let two: Vec<u16> = cps.iter().map(|&c| c as u16).collect();
        let (wide, narrow) = (
            Native { units: Units::Four(&cps), class: Class::Ucs4 },
            Native { units: Units::Two(&two), class: Class::Ucs2 },
        );
        assert!(wide.same_text(narrow) && narrow.same_text(wide));
        let latin1 = Native { units: Units::One(&[0x61, 0xE9]), class: Class::Latin1 };
        assert!(wide.slice(0, 2).same_text(latin1) && latin1.same_text(narrow.slice(0, 2)));
        assert!(!wide.slice(0, 2).same_text(latin1.slice(0, 1)), "another length");
        assert!(!wide.slice(1, 3).same_text(latin1), "another text");
        for native in [wide, narrow] {
            assert_eq!(native.rfind_ascii(b"\n\n<m>"), Some(8));
            assert_eq!(native.slice(0, 8).rfind_ascii(b"\n\n<m>"), Some(2));
            assert_eq!(native.rfind_ascii(b"<x>"), None);
            assert_eq!(native.slice(0, 2).rfind_ascii(b"\n\n<m>"), None, "longer than the text");
        }
    }

    #[test]
    fn first_line_of_description() {
        assert_eq!(first_line(b"  \n one \n two"), b"one");
        assert_eq!(first_line(b""), b"");
    }

    #[test]
    fn path_parts_drop_empty() {
        let parts: Vec<&[u8]> = path_parts(b"/a//b/").collect();
        assert_eq!(parts, vec![&b"a"[..], &b"b"[..]]);
        // Slashes and parts at every place around the ends of chunks, as Rust's split finds them.
        for len in 0..=3 * CHUNK + 1 {
            for seed in 0..40u32 {
                let path: Vec<u8> = (0..len as u32)
                    .map(|i| if (i * 7 + seed * 13) % (2 + seed % 5) == 0 { b'/' } else { b'a' + (i % 26) as u8 })
                    .collect();
                let expected: Vec<&[u8]> = path.split(|&b| b == b'/').filter(|p| !p.is_empty()).collect();
                assert_eq!(path_parts(&path).collect::<Vec<_>>(), expected, "{}", String::from_utf8_lossy(&path));
            }
        }
    }

    #[test]
    fn measure_gives_length_and_exact_class() {
        assert_eq!(measure(b""), (0, Class::Ascii));
        assert_eq!(measure("a\u{7f}".as_bytes()), (2, Class::Ascii));
        assert_eq!(measure("\u{80}".as_bytes()), (1, Class::Latin1));
        assert_eq!(measure("\u{ff}x".as_bytes()), (2, Class::Latin1));
        assert_eq!(measure("\u{100}".as_bytes()), (1, Class::Ucs2));
        assert_eq!(measure(&[0xED, 0xA0, 0x80]), (1, Class::Ucs2));
        assert_eq!(measure("\u{ffff}".as_bytes()), (1, Class::Ucs2));
        assert_eq!(measure("\u{10000}".as_bytes()), (1, Class::Ucs4));
        let long = "\u{e9}".repeat(100) + "\u{1F600}";
        assert_eq!(measure(long.as_bytes()), (101, Class::Ucs4));
    }

    #[test]
    fn decode_and_encode_round_trip_every_width() {
        let text: Vec<u8> =
            [&b"a\0"[..], "\u{e9}\u{2192}".as_bytes(), &[0xED, 0xB0, 0x80], "\u{1F600}".as_bytes()].concat();
        let mut wide = [0u32; 8];
        let n = decode_into(&text, &mut wide).unwrap();
        assert_eq!(&wide[..n], &[0x61, 0, 0xE9, 0x2192, 0xDC00, 0x1F600]);
        assert_eq!(decode_into(&text, &mut [0u16; 8]), None, "U+1F600 is no UCS-2 unit");
        assert_eq!(decode_into(&text, &mut [0u32; 5]), None, "six code points need six units");
        let native = Native { units: Units::Four(&wide[..n]), class: Class::Ucs4 };
        let (mut utf8, mut buf) = (Vec::new(), [0u8; ENCODE_ROOM]);
        let rest = native.utf8_chunks(&mut buf, |c| utf8.extend_from_slice(c));
        utf8.extend_from_slice(&buf[..rest]);
        assert_eq!(utf8, text);
        let lines: Vec<usize> = native.lines().map(|l| l.len()).collect();
        assert_eq!(lines, vec![6]);
        let split = Native { units: Units::Two(&[0x61, 0x0A, 0x0A, 0x2192]), class: Class::Ucs2 };
        let lines: Vec<usize> = split.lines().map(|l| l.len()).collect();
        assert_eq!(lines, vec![1, 0, 1]);
        let mut two = [0u16; 3];
        assert_eq!(u16::copy_units(&mut two, Units::One(&[0x61, 0xFF])), Some(2));
        assert_eq!(two, [0x61, 0xFF, 0]);
        assert_eq!(u16::copy_units(&mut two, Units::Four(&[0x61])), None, "never narrowed");
        assert_eq!(u8::copy_units(&mut [0u8; 1], Units::One(b"ab")), None, "does not fit");
    }
}
