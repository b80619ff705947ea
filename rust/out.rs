//! Where rendered text goes. A renderer is written once, against `Sink`, and runs on
//! the sink its caller picks (the shape of minijinja's `Output`): `Count` measures the
//! exact length and width class of the output, `Wide` writes a `str`'s code units in
//! place at that final width, and `Out` collects surrogatepass UTF-8 for Rust tests
//! and fuzzing. No renderer computes its size by hand: `Count` runs the same code.

use crate::error::{RenderError, RenderResult};
use crate::model::{Chars, Int};
use xxhash_rust::xxh3::Xxh3Default;

use crate::text::{self, widen, Class, CodeUnit, Native, Unit, Units};

/// A named part of the output, in the sink's own unit (bytes for `Out`, code points
/// for `Count` and `Wide`): `<tool_usage_rules>` to `</tool_usage_rules>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section {
    pub name: &'static str,
    pub start: usize,
    pub end: usize,
}

/// What a renderer writes to.
pub trait Sink {
    /// Writes text held as surrogatepass UTF-8 (see `text`).
    fn push(&mut self, text: &[u8]);
    /// Writes a Python `str`'s code units.
    fn push_native(&mut self, text: Native<'_>);
    /// Writes text known to be ASCII (literals, numbers): nothing to decode or scan.
    fn push_ascii(&mut self, text: &[u8]) {
        self.push(text);
    }
    /// How much is written so far, in the sink's unit.
    fn len(&self) -> usize;
    /// Records that section `name` runs from `start` to the end of what is written so far.
    fn section(&mut self, _name: &'static str, _start: usize) {}

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes a Python `str` given in both forms: its UTF-8 and its own code units.
    fn push_both(&mut self, _utf8: &[u8], native: Native<'_>) {
        self.push_native(native);
    }

    /// Writes `n` spaces; counting them costs nothing (indentation grows with the square of a depth).
    fn spaces(&mut self, n: usize) {
        const SPACES: &[u8] = &[b' '; 64];
        let mut n = n;
        while n > 0 {
            let chunk = n.min(SPACES.len());
            self.push(&SPACES[..chunk]);
            n -= chunk;
        }
    }

    /// Writes `n` in decimal, as Python's `str(int)`.
    fn int(&mut self, n: i64) {
        // Two digits a step: the metadata lines write two numbers a block.
        const PAIRS: [u8; 200] = {
            let mut pairs = [0u8; 200];
            let mut k = 0;
            while k < 100 {
                pairs[2 * k] = b'0' + (k / 10) as u8;
                pairs[2 * k + 1] = b'0' + (k % 10) as u8;
                k += 1;
            }
            pairs
        };
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        let mut m = n.unsigned_abs();
        while m >= 100 {
            let pair = (m % 100) as usize * 2;
            m /= 100;
            i -= 2;
            digits[i..i + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
        }
        if m >= 10 {
            i -= 2;
            digits[i..i + 2].copy_from_slice(&PAIRS[m as usize * 2..m as usize * 2 + 2]);
        } else {
            i -= 1;
            digits[i] = b'0' + m as u8;
        }
        if n < 0 {
            self.push_ascii(b"-");
        }
        self.push_ascii(&digits[i..]);
    }

    fn usize(&mut self, n: usize) {
        self.int(n as i64);
    }

    fn num(&mut self, n: &Int) {
        match n {
            Int::Small(v) => self.int(*v),
            Int::Rendered(t) => self.push(t),
        }
    }

    /// Writes every line of `text` (`s.split("\n")`) as `N→ line\n`, numbered from 1.
    fn numbered_lines(&mut self, text: Chars<'_>)
    where
        Self: Sized,
    {
        numbered_lines_each(self, text);
    }
}

/// `"→ "` after a line number, as the UCS-2 units the final `str` holds (no decoding per line).
const ARROW: Native = Native { units: Units::Two(&[0x2192, 0x20]), class: Class::Ucs2 };

/// Numbered lines, one line at a time: every sink can write them so.
fn numbered_lines_each(out: &mut impl Sink, text: Chars<'_>) {
    for (n, line) in text.lines().enumerate() {
        crate::w!(out, n + 1, ARROW, line, "\n");
    }
}

/// Total digits of the numbers 1 to `n`.
fn digits_up_to(n: usize) -> usize {
    let (mut total, mut low, mut width) = (0, 1usize, 1);
    while low <= n {
        let high = low.saturating_mul(10) - 1;
        total += (n.min(high) - low + 1) * width;
        if high >= n {
            break;
        }
        (low, width) = (high + 1, width + 1);
    }
    total
}

/// A line number in decimal, counted up in place (no formatting per line).
struct LineNumber {
    digits: [u8; 20],
    start: usize,
}

impl LineNumber {
    fn one() -> Self {
        let mut digits = [b'0'; 20];
        digits[19] = b'1';
        LineNumber { digits, start: 19 }
    }

    fn as_bytes(&self) -> &[u8] {
        &self.digits[self.start..]
    }

    fn increment(&mut self) {
        for i in (0..20).rev() {
            if self.digits[i] != b'9' {
                self.digits[i] += 1;
                self.start = self.start.min(i);
                return;
            }
            self.digits[i] = b'0';
        }
    }
}

/// `n→ ` written at `at`; where it ends, or `None` when it does not fit.
fn write_line_number<D: Unit>(dst: &mut [D], at: usize, number: &LineNumber) -> Option<usize> {
    let digits = number.as_bytes();
    let end = at.checked_add(digits.len() + 2)?;
    let slot = dst.get_mut(at..end)?;
    D::copy_ascii(&mut slot[..digits.len()], digits);
    slot[digits.len()] = D::from_cp(0x2192)?;
    slot[digits.len() + 1] = D::from_cp(0x20)?;
    Some(end)
}

/// Numbered lines of `src` written from the start of `dst`; the units written, or `None`
/// when they do not fit. Lines are mostly short: a word of units is copied at a time, and
/// where it holds a newline the copy goes on just after it, behind the next line's number.
/// Once a line has run `LONG` words, the rest of it is searched for and copied at once.
fn write_numbered<S: CodeUnit, D: Unit + From<S>>(dst: &mut [D], src: &[S]) -> Option<usize> {
    const WORD: usize = 8;
    const LONG: usize = 4;
    let mut number = LineNumber::one();
    let mut at = write_line_number(dst, 0, &number)?;
    let (mut i, mut words) = (0, 0);
    while let (Some(word), Some(out)) = (
        src.get(i..).and_then(|s| s.first_chunk::<WORD>()),
        dst.get_mut(at..).and_then(|d| d.first_chunk_mut::<WORD>()),
    ) {
        out.iter_mut().zip(word).for_each(|(o, &u)| *o = D::from(u));
        let line_end = if let Some(newline) = S::newline_in_word(word) {
            // What the word held after its first newline is written again, after the number.
            newline + 1
        } else if words + 1 < LONG {
            (at, i, words) = (at + WORD, i + WORD, words + 1);
            continue;
        } else {
            let rest = &src[i + WORD..];
            let Some(newline) = S::find_newline(rest) else {
                at += WORD + widen(dst.get_mut(at + WORD..)?, rest)?;
                i = src.len();
                break;
            };
            WORD + widen(dst.get_mut(at + WORD..)?, &rest[..=newline])?
        };
        (at, i, words) = (at + line_end, i + line_end, 0);
        number.increment();
        at = write_line_number(dst, at, &number)?;
    }
    // Too near the end of either for a whole word: a unit at a time.
    for &u in src.get(i..)? {
        *dst.get_mut(at)? = D::from(u);
        at += 1;
        if u.into() == 0x0A {
            number.increment();
            at = write_line_number(dst, at, &number)?;
        }
    }
    *dst.get_mut(at)? = D::from_cp(0x0A)?;
    Some(at + 1)
}

/// Something rendered: a section, a whole prompt. Rendering is deterministic, so the
/// `Count` of one run is the size of the next.
pub trait Render {
    fn render(&self, out: &mut impl Sink) -> RenderResult;
}

/// Surrogatepass UTF-8, and where its sections are (byte offsets).
#[derive(Debug, Default)]
pub struct Out {
    pub buf: Vec<u8>,
    pub sections: Vec<Section>,
}

impl Out {
    pub fn with_capacity(n: usize) -> Self {
        Out { buf: Vec::with_capacity(n), sections: Vec::new() }
    }

    /// What `r` renders, as UTF-8.
    pub fn of(r: &(impl Render + ?Sized)) -> RenderResult<Self> {
        let mut out = Out::default();
        r.render(&mut out)?;
        Ok(out)
    }
}

impl Sink for Out {
    #[inline]
    fn push(&mut self, text: &[u8]) {
        self.buf.extend_from_slice(text);
    }

    fn push_native(&mut self, text: Native<'_>) {
        text.utf8_chunks(&mut [0u8; 256], |chunk| self.buf.extend_from_slice(chunk));
    }

    fn push_both(&mut self, utf8: &[u8], _native: Native<'_>) {
        self.buf.extend_from_slice(utf8);
    }

    fn len(&self) -> usize {
        self.buf.len()
    }

    fn section(&mut self, name: &'static str, start: usize) {
        self.sections.push(Section { name, start, end: self.buf.len() });
    }
}

/// The exact length (code points) and width class of what would be written.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Count {
    pub chars: usize,
    pub class: Class,
}

impl Count {
    /// What `r` renders, measured.
    pub fn of(r: &(impl Render + ?Sized)) -> RenderResult<Self> {
        let mut count = Count::default();
        r.render(&mut count)?;
        Ok(count)
    }
}

impl Sink for Count {
    #[inline]
    fn push(&mut self, text: &[u8]) {
        let (chars, class) = text::measure(text);
        self.chars = self.chars.saturating_add(chars);
        self.class = self.class.max(class);
    }

    fn push_native(&mut self, text: Native<'_>) {
        self.chars = self.chars.saturating_add(text.len());
        self.class = self.class.max(text.class);
    }

    fn push_ascii(&mut self, text: &[u8]) {
        self.chars = self.chars.saturating_add(text.len());
    }

    fn int(&mut self, n: i64) {
        // The digits of `n` (and its sign), counted without writing them.
        let digits = n.unsigned_abs().checked_ilog10().map_or(1, |d| d as usize + 1);
        self.chars = self.chars.saturating_add(digits + usize::from(n < 0));
    }

    fn spaces(&mut self, n: usize) {
        self.chars = self.chars.saturating_add(n);
    }

    fn numbered_lines(&mut self, text: Chars<'_>) {
        // O(1) a line: the lines hold every code point of `text` but its (ASCII) newlines,
        // so with the arrow the class is the text's class or UCS-2, whichever is wider.
        let (chars, class, newlines) = match text {
            Chars::Native(n) => (n.len(), n.class, n.count(0x0A)),
            Chars::Utf8(utf8) => {
                let (chars, class) = text::measure(utf8);
                (chars, class, memchr::memchr_iter(b'\n', utf8).count())
            }
        };
        let lines = newlines + 1;
        // Per line: its number, "→ ", the line, "\n"; the lines' own code points are `chars - newlines`.
        let written = digits_up_to(lines).saturating_add(3 * lines).saturating_add(chars - newlines);
        self.chars = self.chars.saturating_add(written);
        self.class = self.class.max(class).max(Class::Ucs2);
    }

    fn len(&self) -> usize {
        self.chars
    }
}

/// The code units of a `str` being written, in its final width.
#[derive(Debug)]
pub enum UnitsMut<'a> {
    One(&'a mut [u8]),
    Two(&'a mut [u16]),
    Four(&'a mut [u32]),
}

/// Writes code units in place into a `str` allocated at its final length and width.
/// Text that does not fit (a count that was wrong) marks the output broken instead
/// of writing past it, and `finish` reports it.
/// With `hashing`, it also streams the output's surrogatepass UTF-8 into XXH3-128 (the
/// fingerprint): text that came with its UTF-8 is hashed as it is, the rest is encoded
/// through a small buffer; no UTF-8 copy of the output is made.
pub struct Wide<'a> {
    units: UnitsMut<'a>,
    at: usize,
    broken: bool,
    hasher: Option<Box<Xxh3Default>>,
    pub sections: Vec<Section>,
}

fn write_utf8<U: Unit>(dst: &mut [U], at: usize, text: &[u8]) -> Option<usize> {
    text::decode_into(text, dst.get_mut(at..)?)
}

#[inline]
fn write_ascii<U: Unit>(dst: &mut [U], at: usize, text: &[u8]) -> Option<usize> {
    U::copy_ascii(dst.get_mut(at..at.checked_add(text.len())?)?, text);
    Some(text.len())
}

fn write_native<U: Unit>(dst: &mut [U], at: usize, text: Native<'_>) -> Option<usize> {
    U::copy_units(dst.get_mut(at..)?, text.units)
}

impl<'a> Wide<'a> {
    pub fn new(units: UnitsMut<'a>) -> Self {
        Wide { units, at: 0, broken: false, hasher: None, sections: Vec::new() }
    }

    /// The same, also computing the output's fingerprint.
    pub fn hashing(units: UnitsMut<'a>) -> Self {
        Wide { hasher: Some(Box::default()), ..Wide::new(units) }
    }

    fn capacity(&self) -> usize {
        match &self.units {
            UnitsMut::One(u) => u.len(),
            UnitsMut::Two(u) => u.len(),
            UnitsMut::Four(u) => u.len(),
        }
    }

    /// Renders `r` into `units`, which must be exactly as long as `r`'s `Count`.
    pub fn write(r: &(impl Render + ?Sized), units: UnitsMut<'a>) -> RenderResult<Vec<Section>> {
        let mut wide = Wide::new(units);
        r.render(&mut wide)?;
        wide.finish().map(|(sections, _)| sections)
    }

    /// The same, with the output's fingerprint (see `fingerprint`).
    pub fn write_hashed(r: &(impl Render + ?Sized), units: UnitsMut<'a>) -> RenderResult<(Vec<Section>, u128)> {
        let mut wide = Wide::hashing(units);
        r.render(&mut wide)?;
        let (sections, hash) = wide.finish()?;
        Ok((sections, hash.unwrap_or_default()))
    }

    /// The sections (and fingerprint), once every unit was written and nothing more.
    pub fn finish(self) -> RenderResult<(Vec<Section>, Option<u128>)> {
        if self.broken || self.at != self.capacity() {
            return Err(RenderError::Value("the output changed between measuring and writing it".into()));
        }
        Ok((self.sections, self.hasher.map(|h| h.digest128())))
    }

    fn hash(&mut self, utf8: &[u8]) {
        if let Some(h) = &mut self.hasher {
            h.update(utf8);
        }
    }

    fn hash_native(&mut self, text: Native<'_>) {
        if let Some(h) = &mut self.hasher {
            text.utf8_chunks(&mut [0u8; 256], |chunk| h.update(chunk));
        }
    }

    fn advance(&mut self, written: Option<usize>) {
        match written {
            Some(n) => self.at += n,
            None => self.broken = true,
        }
    }
}

impl Sink for Wide<'_> {
    #[inline]
    fn push(&mut self, text: &[u8]) {
        if self.broken {
            return;
        }
        self.hash(text);
        let at = self.at;
        let written = match &mut self.units {
            UnitsMut::One(u) => write_utf8(u, at, text),
            UnitsMut::Two(u) => write_utf8(u, at, text),
            UnitsMut::Four(u) => write_utf8(u, at, text),
        };
        self.advance(written);
    }

    fn push_native(&mut self, text: Native<'_>) {
        self.hash_native(text);
        self.push_units(text);
    }

    fn push_both(&mut self, utf8: &[u8], native: Native<'_>) {
        self.hash(utf8);
        self.push_units(native);
    }

    #[inline]
    fn push_ascii(&mut self, text: &[u8]) {
        if self.broken {
            return;
        }
        self.hash(text);
        let at = self.at;
        let written = match &mut self.units {
            UnitsMut::One(u) => write_ascii(u, at, text),
            UnitsMut::Two(u) => write_ascii(u, at, text),
            UnitsMut::Four(u) => write_ascii(u, at, text),
        };
        self.advance(written);
    }

    fn len(&self) -> usize {
        self.at
    }

    fn section(&mut self, name: &'static str, start: usize) {
        self.sections.push(Section { name, start, end: self.at });
    }

    fn numbered_lines(&mut self, text: Chars<'_>) {
        let Chars::Native(native) = text else {
            return numbered_lines_each(self, text);
        };
        if self.broken {
            return;
        }
        let start = self.at;
        let written = match (&mut self.units, native.units) {
            (UnitsMut::One(d), Units::One(s)) => d.get_mut(start..).and_then(|d| write_numbered(d, s)),
            (UnitsMut::Two(d), Units::One(s)) => d.get_mut(start..).and_then(|d| write_numbered(d, s)),
            (UnitsMut::Two(d), Units::Two(s)) => d.get_mut(start..).and_then(|d| write_numbered(d, s)),
            (UnitsMut::Four(d), Units::One(s)) => d.get_mut(start..).and_then(|d| write_numbered(d, s)),
            (UnitsMut::Four(d), Units::Two(s)) => d.get_mut(start..).and_then(|d| write_numbered(d, s)),
            (UnitsMut::Four(d), Units::Four(s)) => d.get_mut(start..).and_then(|d| write_numbered(d, s)),
            // A source wider than the output never fits (a wrong count): the output is marked broken.
            _ => None,
        };
        self.advance(written);
        if let (Some(h), false) = (&mut self.hasher, self.broken) {
            // Hashed from what was just written: the same UTF-8, in order.
            let units = match &self.units {
                UnitsMut::One(u) => Native { units: Units::One(&u[start..self.at]), class: Class::Latin1 },
                UnitsMut::Two(u) => Native { units: Units::Two(&u[start..self.at]), class: Class::Ucs2 },
                UnitsMut::Four(u) => Native { units: Units::Four(&u[start..self.at]), class: Class::Ucs4 },
            };
            units.utf8_chunks(&mut [0u8; 256], |chunk| h.update(chunk));
        }
    }
}

impl Wide<'_> {
    fn push_units(&mut self, text: Native<'_>) {
        if self.broken {
            return;
        }
        let at = self.at;
        let written = match &mut self.units {
            UnitsMut::One(u) => write_native(u, at, text),
            UnitsMut::Two(u) => write_native(u, at, text),
            UnitsMut::Four(u) => write_native(u, at, text),
        };
        self.advance(written);
    }
}

/// A `str` built in Rust memory the way the binding builds one in Python's: measured,
/// allocated at its class's width, written in place. Rust tests and fuzz targets check
/// the final-width path with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OwnedUnits {
    One(Vec<u8>),
    Two(Vec<u16>),
    Four(Vec<u32>),
}

/// The final-width output of a render: its units, class, sections (code points) and fingerprint.
#[derive(Debug, Clone)]
pub struct Final {
    pub units: OwnedUnits,
    pub class: Class,
    pub sections: Vec<Section>,
    pub fingerprint: u128,
}

impl Final {
    pub fn of(r: &(impl Render + ?Sized)) -> RenderResult<Self> {
        let count = Count::of(r)?;
        let n = count.chars;
        let mut units = match count.class {
            Class::Ascii | Class::Latin1 => OwnedUnits::One(vec![0; n]),
            Class::Ucs2 => OwnedUnits::Two(vec![0; n]),
            Class::Ucs4 => OwnedUnits::Four(vec![0; n]),
        };
        let target = match &mut units {
            OwnedUnits::One(u) => UnitsMut::One(u),
            OwnedUnits::Two(u) => UnitsMut::Two(u),
            OwnedUnits::Four(u) => UnitsMut::Four(u),
        };
        let (sections, fingerprint) = Wide::write_hashed(r, target)?;
        Ok(Final { units, class: count.class, sections, fingerprint })
    }

    /// The units as a `Native` text, with the class the count gave.
    pub fn native(&self) -> Native<'_> {
        let units = match &self.units {
            OwnedUnits::One(u) => Units::One(u),
            OwnedUnits::Two(u) => Units::Two(u),
            OwnedUnits::Four(u) => Units::Four(u),
        };
        Native { units, class: self.class }
    }

    /// The smallest class that holds every unit: what CPython requires the class to be.
    pub fn exact_class(&self) -> Class {
        let max = match &self.units {
            OwnedUnits::One(u) => Unit::max_cp(u.as_slice()),
            OwnedUnits::Two(u) => Unit::max_cp(u.as_slice()),
            OwnedUnits::Four(u) => Unit::max_cp(u.as_slice()),
        };
        match max {
            0..=0x7F => Class::Ascii,
            0x80..=0xFF => Class::Latin1,
            0x100..=0xFFFF => Class::Ucs2,
            _ => Class::Ucs4,
        }
    }

    /// The text as surrogatepass UTF-8.
    pub fn to_utf8(&self) -> Vec<u8> {
        let mut out = Out::default();
        out.push_native(self.native());
        out.buf
    }
}

/// Writes each piece in order: `w!(out, "<", label, ">\n")` reads like the output.
#[macro_export]
macro_rules! w {
    ($out:expr, $($piece:expr),+ $(,)?) => {{
        $( $crate::out::Piece::write_to(&$piece, $out); )+
    }};
}

/// What `w!` can write: literals, text, numbers.
pub trait Piece {
    fn write_to(&self, out: &mut impl Sink);
}

impl Piece for &str {
    #[inline(always)]
    fn write_to(&self, out: &mut impl Sink) {
        if self.is_ascii() {
            out.push_ascii(self.as_bytes());
        } else {
            out.push(self.as_bytes());
        }
    }
}

impl Piece for &[u8] {
    #[inline]
    fn write_to(&self, out: &mut impl Sink) {
        out.push(self);
    }
}

impl Piece for std::borrow::Cow<'_, [u8]> {
    #[inline]
    fn write_to(&self, out: &mut impl Sink) {
        out.push(self);
    }
}

/// A whole text: its own code units when it has them (copied as they are), else its UTF-8.
impl Piece for crate::model::Text<'_> {
    #[inline]
    fn write_to(&self, out: &mut impl Sink) {
        match self.native() {
            Some(native) => out.push_both(self, native),
            None => out.push(self),
        }
    }
}

impl Piece for &crate::model::Text<'_> {
    #[inline]
    fn write_to(&self, out: &mut impl Sink) {
        (*self).write_to(out);
    }
}

impl Piece for Native<'_> {
    #[inline]
    fn write_to(&self, out: &mut impl Sink) {
        out.push_native(*self);
    }
}

impl Piece for usize {
    #[inline]
    fn write_to(&self, out: &mut impl Sink) {
        out.usize(*self);
    }
}

impl Piece for Int<'_> {
    #[inline]
    fn write_to(&self, out: &mut impl Sink) {
        out.num(self);
    }
}

impl Piece for Chars<'_> {
    #[inline]
    fn write_to(&self, out: &mut impl Sink) {
        match self {
            Chars::Utf8(text) => out.push(text),
            Chars::Native(text) => out.push_native(*text),
        }
    }
}

/// UTF-8 text renders as itself.
impl Render for [u8] {
    fn render(&self, out: &mut impl Sink) -> RenderResult {
        out.push(self);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ints_render_like_python() {
        let mut out = Out::default();
        w!(&mut out, 0usize, " ", Int::Small(-42), " ", Int::Small(i64::MIN));
        assert_eq!(out.buf, b"0 -42 -9223372036854775808");
        let powers = (0..19).map(|p| 10i64.pow(p)).flat_map(|t| [t - 1, t, t + 1, -t, 7 * t]);
        for n in powers.chain([i64::MAX, i64::MIN, 5000, 2048]) {
            let mut count = Count::default();
            count.int(n);
            assert_eq!(count.chars, n.to_string().len(), "{n}");
            let mut out = Out::default();
            out.int(n);
            assert_eq!(out.buf, n.to_string().as_bytes(), "{n}");
        }
    }

    /// Text and natives mixed: every sink agrees, and the final width is the exact class.
    struct Mixed<'a>(&'a [u8], Native<'a>);

    impl Render for Mixed<'_> {
        fn render(&self, out: &mut impl Sink) -> RenderResult {
            let start = out.len();
            w!(out, "<", self.0, ">", self.1, "\n");
            out.section("all", start);
            Ok(())
        }
    }

    #[test]
    fn every_sink_writes_the_same_text() {
        let two = [0x2192u16, 0xD800];
        let cases: [(&[u8], Native, Class); 4] = [
            (b"ascii", Native { units: Units::One(b"x"), class: Class::Ascii }, Class::Ascii),
            ("\u{e9}".as_bytes(), Native { units: Units::One(b"x"), class: Class::Ascii }, Class::Latin1),
            (b"a", Native { units: Units::Two(&two), class: Class::Ucs2 }, Class::Ucs2),
            ("\u{1F600}".as_bytes(), Native { units: Units::One(&[0xE9]), class: Class::Latin1 }, Class::Ucs4),
        ];
        for (utf8, native, class) in cases {
            let r = Mixed(utf8, native);
            let out = Out::of(&r).unwrap();
            let fin = Final::of(&r).unwrap();
            assert_eq!(fin.to_utf8(), out.buf);
            assert_eq!((fin.class, fin.exact_class()), (class, class));
            assert_eq!(fin.sections, vec![Section { name: "all", start: 0, end: text::char_len(&out.buf) }]);
            assert_eq!(fin.fingerprint, crate::fingerprint::fingerprint(&out.buf));
        }
    }

    /// A value's numbered lines, as the line-numbered renderer writes them.
    struct Numbered<'a>(Chars<'a>);

    impl Render for Numbered<'_> {
        fn render(&self, out: &mut impl Sink) -> RenderResult {
            out.numbered_lines(self.0);
            Ok(())
        }
    }

    #[test]
    fn numbered_lines_agree_on_every_sink() {
        let many: String = (0..120).map(|i| if i % 3 == 0 { "\n" } else { "x" }).collect();
        for value in ["a", "\n", "a\r\n\nb\n", "\u{e9}\n\0", "\u{2192}\n\u{1F600}", many.as_str()] {
            let utf8 = value.as_bytes();
            let cps: Vec<u32> = value.chars().map(u32::from).collect();
            let (ones, twos): (Vec<u8>, Vec<u16>) =
                (cps.iter().map(|&c| c as u8).collect(), cps.iter().map(|&c| c as u16).collect());
            let max = cps.iter().copied().max().unwrap_or(0);
            let native = match max {
                0..=0x7F => Native { units: Units::One(&ones), class: Class::Ascii },
                0x80..=0xFF => Native { units: Units::One(&ones), class: Class::Latin1 },
                0x100..=0xFFFF => Native { units: Units::Two(&twos), class: Class::Ucs2 },
                _ => Native { units: Units::Four(&cps), class: Class::Ucs4 },
            };
            let expected: String =
                value.split('\n').enumerate().map(|(n, l)| format!("{}\u{2192} {l}\n", n + 1)).collect();
            for text in [Chars::Utf8(utf8), Chars::Native(native)] {
                let r = Numbered(text);
                assert_eq!(Out::of(&r).unwrap().buf, expected.as_bytes(), "{value:?}");
                let fin = Final::of(&r).unwrap();
                assert_eq!(fin.to_utf8(), expected.as_bytes(), "{value:?}");
                assert_eq!(fin.class, fin.exact_class(), "{value:?}");
                assert_eq!(fin.fingerprint, crate::fingerprint::fingerprint(expected.as_bytes()));
            }
        }
        assert_eq!((digits_up_to(0), digits_up_to(9), digits_up_to(10), digits_up_to(100)), (0, 9, 11, 192));
    }

    /// A wide label before the numbered lines: the output is wider than the value.
    struct Labelled<'a>(&'a [u8], Chars<'a>);

    impl Render for Labelled<'_> {
        fn render(&self, out: &mut impl Sink) -> RenderResult {
            w!(out, self.0);
            out.numbered_lines(self.1);
            Ok(())
        }
    }

    #[test]
    fn numbered_lines_of_every_length_and_width_agree() {
        // Lines of 0 to 60 code points in every width, values ending with and without a newline,
        // so that lines start and end at every place in a word and near the output's end.
        let pool = ['a', '\r', '\0', '\u{e9}', '\u{2192}', '\u{1F600}'];
        let mut seed = 7u32;
        let mut next = |n: u32| {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (seed >> 16) % n
        };
        for _ in 0..400 {
            let widest = 1 + next(pool.len() as u32) as usize;
            let value: String = (0..next(12))
                .map(|_| (0..next(61)).map(|_| pool[next(widest as u32) as usize]).collect::<String>())
                .collect::<Vec<_>>()
                .join("\n");
            // The value's units at the width Python stores it in.
            let stored = Final::of(value.as_bytes()).unwrap();
            let numbered: String =
                value.split('\n').enumerate().map(|(n, l)| format!("{}\u{2192} {l}\n", n + 1)).collect();
            for label in ["", "\u{1F600}"] {
                let r = Labelled(label.as_bytes(), Chars::Native(stored.native()));
                let expected = format!("{label}{numbered}");
                let fin = Final::of(&r).unwrap();
                assert_eq!(fin.to_utf8(), expected.as_bytes(), "{value:?}");
                assert_eq!(fin.class, fin.exact_class(), "{value:?}");
            }
        }
    }

    #[test]
    fn a_wrong_count_is_an_error_not_a_panic() {
        let r = Mixed(b"abc", Native { units: Units::One(b""), class: Class::Ascii });
        let mut short = [0u8; 3];
        assert!(Wide::write(&r, UnitsMut::One(&mut short)).is_err());
        let mut long = [0u8; 30];
        assert!(Wide::write(&r, UnitsMut::One(&mut long)).is_err());
    }
}
