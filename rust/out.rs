//! Where rendered text goes. A renderer is written once, against `Sink`, and runs on
//! the sink its caller picks (the shape of minijinja's `Output`): `Count` measures the
//! exact length and width class of the output, `Wide` writes a `str`'s code units in
//! place at that final width, and `Out` collects surrogatepass UTF-8 for Rust tests
//! and fuzzing. No renderer computes its size by hand: `Count` runs the same code.

use crate::error::{RenderError, RenderResult};
use crate::model::{Chars, Int};

use crate::text::{self, widen, Class, CodeUnit, Native, Unit, Units, CHUNK};

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
    /// Writes surrogatepass UTF-8 text, as ASCII (nothing to decode) when `ascii` says it is.
    fn push_text(&mut self, text: &[u8], ascii: bool) {
        if ascii {
            self.push_ascii(text);
        } else {
            self.push(text);
        }
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
            self.push_ascii(&SPACES[..chunk]);
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

/// Units of a line number's fixed-size store: `n→ ` for numbers of up to 6 digits.
const PREFIX: usize = 8;

/// A line number in decimal, counted up in place (no formatting per line), and kept in the
/// output's own units as `n→ ` so that most lines write it with one fixed-size store.
struct LineNumber<D> {
    digits: [u8; 20],
    start: usize,
    arrow: D,
    /// `n→ ` as it was at the last carry (its last digit stale), then slack that the line
    /// written after the number overwrites.
    prefix: [D; PREFIX],
}

impl<D: Unit + From<u8>> LineNumber<D> {
    /// Line `n`, or `None` in an output too narrow for `→`.
    fn at(mut n: usize) -> Option<Self> {
        let (mut digits, mut start) = ([b'0'; 20], 20);
        while n > 0 || start == 20 {
            start -= 1;
            digits[start] = b'0' + (n % 10) as u8;
            n /= 10;
        }
        let mut number = LineNumber { digits, start, arrow: D::from_cp(0x2192)?, prefix: [D::default(); PREFIX] };
        number.fill_prefix();
        Some(number)
    }

    fn as_bytes(&self) -> &[u8] {
        &self.digits[self.start..]
    }

    /// `n→ ` written over the whole of `slot`, which is exactly its length.
    fn spell(digits: &[u8], arrow: D, slot: &mut [D]) {
        if let Some((number, [a, space])) = slot.split_at_mut_checked(digits.len()) {
            D::copy_ascii(number, digits);
            (*a, *space) = (arrow, D::from(b' '));
        }
    }

    /// `n→ ` in the prefix, when it fits there.
    fn fill_prefix(&mut self) {
        let digits = &self.digits[self.start..];
        if let Some(slot) = self.prefix.get_mut(..digits.len() + 2) {
            Self::spell(digits, self.arrow, slot);
        }
    }

    #[inline]
    fn increment(&mut self) {
        // Nine times in ten only the last digit changes, and the prefix is left as it is.
        if self.digits[19] != b'9' {
            self.digits[19] += 1;
        } else {
            self.carry();
        }
    }

    fn carry(&mut self) {
        for i in (0..20).rev() {
            if self.digits[i] != b'9' {
                self.digits[i] += 1;
                self.start = self.start.min(i);
                break;
            }
            self.digits[i] = b'0';
        }
        self.fill_prefix();
    }

    /// `n→ ` as one fixed-size store at the start of `dst`; its length, or `None` for a
    /// number too long for the prefix or a `dst` too short for the store.
    #[inline]
    fn write_prefix(&self, dst: &mut [D]) -> Option<usize> {
        let (slot, last) = (dst.first_chunk_mut::<PREFIX>()?, 19 - self.start);
        if last >= PREFIX - 2 {
            return None;
        }
        // The prefix as a whole, then its last digit as it is now: a store after a store
        // (updating the prefix in place would make the next line's copy of it wait).
        *slot = self.prefix;
        slot[last] = D::from(self.digits[19]);
        Some(last + 3)
    }

    /// `n→ ` written at `at`, exactly; where it ends, or `None` when it does not fit.
    fn write(&self, dst: &mut [D], at: usize) -> Option<usize> {
        let digits = self.as_bytes();
        let end = at.checked_add(digits.len() + 2)?;
        Self::spell(digits, self.arrow, dst.get_mut(at..end)?);
        Some(end)
    }
}

/// Values at least this long are numbered as two runs at once.
const TWO_RUNS: usize = 2048;

/// Once a line has run this many chunks, the rest of it is searched for and copied at once.
const LONG: usize = 8;

/// Numbered lines of `src` written from the start of `dst`; the units written, or `None`
/// when they do not fit. Where a line starts waits on finding where the one before ends, so
/// a long value is split at a newline near its middle and its halves written as two runs,
/// a line of each in turn: neither run waits on the other.
fn write_numbered<S: CodeUnit, D: Unit + From<S> + From<u8>>(dst: &mut [D], src: &[S]) -> Option<usize> {
    let half = src.len() / 2;
    let split = (src.len() >= TWO_RUNS).then(|| S::find_newline(&src[half..])).flatten();
    let Some(newline) = split.map(|n| half + n) else {
        let mut run = Run::new(1)?;
        while run.line(src, dst) {}
        return run.finish(src, dst);
    };
    // The first run's lines end at that newline: their numbers, `→ `, units and newlines.
    let lines = S::count_newlines(&src[..newline]) + 1;
    let first_len = digits_up_to(lines) + 2 * lines + newline + 1;
    let (first_dst, second_dst) = dst.split_at_mut_checked(first_len)?;
    let (first_src, second_src) = (&src[..newline], &src[newline + 1..]);
    let mut first = Run::new(1)?;
    let mut second = Run::new(lines + 1)?;
    let (mut more_first, mut more_second) = (true, true);
    while more_first && more_second {
        (more_first, more_second) = (first.line(first_src, first_dst), second.line(second_src, second_dst));
    }
    while more_first {
        more_first = first.line(first_src, first_dst);
    }
    while more_second {
        more_second = second.line(second_src, second_dst);
    }
    let written = first.finish(first_src, first_dst).filter(|&n| n == first_len)?;
    Some(written + second.finish(second_src, second_dst)?)
}

/// Where a run of numbered lines is: its source read from `i`, its output written from
/// `at`, and whether the line at `i` has its number written (only where the run stopped
/// can it have). The source and the output are arguments of each step, so that the
/// compiler knows they do not overlap.
struct Run<D> {
    i: usize,
    at: usize,
    number: LineNumber<D>,
    numbered: bool,
}

impl<D: Unit + From<u8>> Run<D> {
    /// A run whose first line is numbered `first`.
    fn new(first: usize) -> Option<Self> {
        Some(Run { i: 0, at: 0, number: LineNumber::at(first)?, numbered: false })
    }

    /// Writes the line at `i`: its number by a fixed-size store, then its units a chunk at
    /// a time (where a chunk holds a newline, the next line's number and units are written
    /// over what followed it); false, leaving the line to `finish`, where a store would not fit.
    #[inline(always)]
    fn line<S: CodeUnit>(&mut self, src: &[S], dst: &mut [D]) -> bool
    where
        D: From<S>,
    {
        let (mut i, mut at) = (self.i, self.at);
        // The number and a first chunk, checked at once.
        let (Some(mut chunk), Some(out)) = (
            src.get(i..).and_then(|s| s.first_chunk::<CHUNK>()),
            dst.get_mut(at..).and_then(|d| d.first_chunk_mut::<{ PREFIX + CHUNK }>()),
        ) else {
            return false;
        };
        let Some(len) = self.number.write_prefix(out) else {
            return false;
        };
        at += len;
        let mut chunks = 0;
        let ended = loop {
            let Some(out) = dst.get_mut(at..).and_then(|d| d.first_chunk_mut::<CHUNK>()) else {
                break false;
            };
            out.iter_mut().zip(chunk).for_each(|(o, &u)| *o = D::from(u));
            if let Some(newline) = S::newline_in_chunk(chunk) {
                (at, i) = (at + newline + 1, i + newline + 1);
                break true;
            }
            (at, i, chunks) = (at + CHUNK, i + CHUNK, chunks + 1);
            if chunks == LONG {
                let rest = &src[i..];
                let newline = S::find_newline(rest);
                // The line, or the last line (no newline ends it) with `finish` left to end it.
                let line = &rest[..newline.map_or(rest.len(), |n| n + 1)];
                if let Some(n) = dst.get_mut(at..).and_then(|out| widen(out, line)) {
                    (at, i) = (at + n, i + n);
                    break newline.is_some();
                }
                break false;
            }
            let Some(next) = src.get(i..).and_then(|s| s.first_chunk::<CHUNK>()) else {
                break false;
            };
            chunk = next;
        };
        (self.i, self.at) = (i, at);
        if ended {
            self.number.increment();
        } else {
            self.numbered = true;
        }
        ended
    }

    /// The rest a unit at a time, then the last line's newline: the units written, or `None`
    /// when they do not fit.
    fn finish<S: CodeUnit>(self, src: &[S], dst: &mut [D]) -> Option<usize>
    where
        D: From<S>,
    {
        let Run { i, mut at, mut number, numbered } = self;
        if !numbered {
            at = number.write(dst, at)?;
        }
        for &u in src.get(i..)? {
            *dst.get_mut(at)? = D::from(u);
            at += 1;
            if u.into() == 0x0A {
                number.increment();
                at = number.write(dst, at)?;
            }
        }
        *dst.get_mut(at)? = D::from(b'\n');
        Some(at + 1)
    }
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
        let mut buf = [0u8; text::ENCODE_ROOM];
        let rest = text.utf8_chunks(&mut buf, |chunk| self.buf.extend_from_slice(chunk));
        self.buf.extend_from_slice(&buf[..rest]);
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
            Chars::Native(n) => (n.len(), n.class, n.count_newlines()),
            Chars::Utf8(utf8) => {
                let (chars, class) = text::measure(utf8);
                (chars, class, u8::count_newlines(utf8))
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

impl UnitsMut<'_> {
    /// The same units, borrowed for a shorter while (to write them, then read them).
    pub fn reborrow(&mut self) -> UnitsMut<'_> {
        match self {
            UnitsMut::One(u) => UnitsMut::One(u),
            UnitsMut::Two(u) => UnitsMut::Two(u),
            UnitsMut::Four(u) => UnitsMut::Four(u),
        }
    }

    /// The units as text of `class`.
    pub fn native(&self, class: Class) -> Native<'_> {
        let units = match self {
            UnitsMut::One(u) => Units::One(u),
            UnitsMut::Two(u) => Units::Two(u),
            UnitsMut::Four(u) => Units::Four(u),
        };
        Native { units, class }
    }
}

/// Renders `r` into `units`, which must be exactly as long as `r`'s `Count`: the
/// sink is made for the output's width, so that no piece asks it again.
pub fn write_final(r: &(impl Render + ?Sized), units: UnitsMut<'_>) -> RenderResult<Vec<Section>> {
    match units {
        UnitsMut::One(u) => Wide::new(u).write(r),
        UnitsMut::Two(u) => Wide::new(u).write(r),
        UnitsMut::Four(u) => Wide::new(u).write(r),
    }
}

/// A code unit of a final `str`, into which numbered lines of any narrower width are written.
trait FinalUnit: Unit + From<u8> {
    /// `write_numbered` of `src` into `dst`; `None` for a source wider than `Self` (a wrong count).
    fn numbered(dst: &mut [Self], src: Units<'_>) -> Option<usize>;
}

impl FinalUnit for u8 {
    fn numbered(dst: &mut [u8], src: Units<'_>) -> Option<usize> {
        match src {
            Units::One(s) => write_numbered(dst, s),
            Units::Two(_) | Units::Four(_) => None,
        }
    }
}

impl FinalUnit for u16 {
    fn numbered(dst: &mut [u16], src: Units<'_>) -> Option<usize> {
        match src {
            Units::One(s) => write_numbered(dst, s),
            Units::Two(s) => write_numbered(dst, s),
            Units::Four(_) => None,
        }
    }
}

impl FinalUnit for u32 {
    fn numbered(dst: &mut [u32], src: Units<'_>) -> Option<usize> {
        match src {
            Units::One(s) => write_numbered(dst, s),
            Units::Two(s) => write_numbered(dst, s),
            Units::Four(s) => write_numbered(dst, s),
        }
    }
}

/// Writes code units in place into a `str` allocated at its final length and width `U`.
/// Text that does not fit (a count that was wrong) marks the output broken instead
/// of writing past it, and `finish` reports it.
struct Wide<'a, U> {
    units: &'a mut [U],
    at: usize,
    broken: bool,
    sections: Vec<Section>,
}

impl<'a, U: FinalUnit> Wide<'a, U> {
    fn new(units: &'a mut [U]) -> Self {
        Wide { units, at: 0, broken: false, sections: Vec::new() }
    }

    fn write(mut self, r: &(impl Render + ?Sized)) -> RenderResult<Vec<Section>> {
        r.render(&mut self)?;
        self.finish()
    }

    /// The sections, once every unit was written and nothing more.
    fn finish(self) -> RenderResult<Vec<Section>> {
        if self.broken || self.at != self.units.len() {
            return Err(RenderError::Value("the output changed between measuring and writing it".into()));
        }
        Ok(self.sections)
    }

    /// Writes with `write` (given the units from the current place) unless broken.
    #[inline(always)]
    fn put(&mut self, write: impl FnOnce(&mut [U]) -> Option<usize>) {
        if self.broken {
            return;
        }
        match self.units.get_mut(self.at..).and_then(write) {
            Some(n) => self.at += n,
            None => self.broken = true,
        }
    }
}

impl<U: FinalUnit> Sink for Wide<'_, U> {
    #[inline]
    fn push(&mut self, text: &[u8]) {
        self.put(|dst| text::decode_into(text, dst));
    }

    #[inline]
    fn push_native(&mut self, text: Native<'_>) {
        self.put(|dst| U::copy_units(dst, text.units));
    }

    #[inline]
    fn push_ascii(&mut self, text: &[u8]) {
        self.put(|dst| {
            U::copy_ascii(dst.get_mut(..text.len())?, text);
            Some(text.len())
        });
    }

    fn len(&self) -> usize {
        self.at
    }

    fn section(&mut self, name: &'static str, start: usize) {
        self.sections.push(Section { name, start, end: self.at });
    }

    fn numbered_lines(&mut self, text: Chars<'_>) {
        match text {
            Chars::Native(native) => self.put(|dst| U::numbered(dst, native.units)),
            Chars::Utf8(_) => numbered_lines_each(self, text),
        }
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

/// The final-width output of a render: its units, class and sections (code points).
#[derive(Debug, Clone)]
pub struct Final {
    pub units: OwnedUnits,
    pub class: Class,
    pub sections: Vec<Section>,
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
        let sections = write_final(r, target)?;
        Ok(Final { units, class: count.class, sections })
    }

    /// The fingerprint, hashed from the finished units as the binding hashes the finished `str`.
    pub fn fingerprint(&self) -> u128 {
        crate::fingerprint::fingerprint_native(self.native())
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
            assert_eq!(fin.fingerprint(), crate::fingerprint::fingerprint(&out.buf));
        }
    }

    /// `value`'s lines as Letta numbers them: `N→ line\n` for each of `value.split("\n")`.
    fn numbered(value: &str) -> String {
        value.split('\n').enumerate().map(|(n, l)| format!("{}\u{2192} {l}\n", n + 1)).collect()
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
            let expected = numbered(value);
            for text in [Chars::Utf8(utf8), Chars::Native(native)] {
                let r = Numbered(text);
                assert_eq!(Out::of(&r).unwrap().buf, expected.as_bytes(), "{value:?}");
                let fin = Final::of(&r).unwrap();
                assert_eq!(fin.to_utf8(), expected.as_bytes(), "{value:?}");
                assert_eq!(fin.class, fin.exact_class(), "{value:?}");
                assert_eq!(fin.fingerprint(), crate::fingerprint::fingerprint(expected.as_bytes()));
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

    /// Code points of every width, and units beside `\n` that trip a search for it.
    const POOL: [char; 6] = ['a', '\r', '\0', '\u{e9}', '\u{2192}', '\u{1F600}'];

    /// A small deterministic generator of the tests' values.
    struct Lcg(u32);

    impl Lcg {
        fn next(&mut self, n: u32) -> u32 {
            self.0 = self.0.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (self.0 >> 16) % n
        }
    }

    #[test]
    fn numbered_lines_of_every_length_and_width_agree() {
        // Lines of 0 to 60 code points in every width, values ending with and without a newline,
        // so that lines start and end at every place in a word and near the output's end.
        let mut rng = Lcg(7);
        for _ in 0..400 {
            let widest = 1 + rng.next(POOL.len() as u32) as usize;
            let value: String = (0..rng.next(12))
                .map(|_| (0..rng.next(61)).map(|_| POOL[rng.next(widest as u32) as usize]).collect::<String>())
                .collect::<Vec<_>>()
                .join("\n");
            // The value's units at the width Python stores it in.
            let stored = Final::of(value.as_bytes()).unwrap();
            let numbered = numbered(&value);
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
    fn long_values_are_numbered_as_two_runs_that_agree() {
        // Values past TWO_RUNS in every width: short, empty and long lines (past LONG chunks),
        // the value's middle inside a line, on a newline and past its last newline.
        let mut rng = Lcg(11);
        let mut values: Vec<String> = (0..60)
            .map(|_| {
                let widest = 1 + rng.next(POOL.len() as u32) as usize;
                let mut value = String::new();
                while value.chars().count() < TWO_RUNS + rng.next(3000) as usize {
                    let len = if rng.next(8) == 0 { rng.next(300) } else { rng.next(30) };
                    value.extend((0..len).map(|_| POOL[rng.next(widest as u32) as usize]));
                    value.push('\n');
                }
                value.truncate(value.len() - rng.next(2) as usize);
                value
            })
            .collect();
        let half_on_newline = format!("{}\n{}", "b".repeat(TWO_RUNS / 2), "c".repeat(TWO_RUNS / 2 - 1));
        let one_line_after_half = format!("{}\n{}", "d".repeat(10), "e".repeat(2 * TWO_RUNS));
        values.extend([half_on_newline, one_line_after_half, "\n".repeat(TWO_RUNS), "f".repeat(TWO_RUNS)]);
        for value in &values {
            let stored = Final::of(value.as_bytes()).unwrap();
            let numbered = numbered(value);
            for label in ["", "\u{1F600}"] {
                let fin = Final::of(&Labelled(label.as_bytes(), Chars::Native(stored.native()))).unwrap();
                assert_eq!(fin.to_utf8(), format!("{label}{numbered}").as_bytes(), "{value:?}");
            }
        }
    }

    #[test]
    fn numbers_too_long_for_the_fixed_store_are_written_exactly() {
        // Lines 999,999 to 1,000,001 and on: 7-digit numbers, past the fixed-size store.
        let value = "x\n".repeat(1_000_100);
        let stored = Final::of(value.as_bytes()).unwrap();
        let numbered = numbered(&value);
        let fin = Final::of(&Labelled(b"", Chars::Native(stored.native()))).unwrap();
        assert_eq!(fin.to_utf8(), numbered.as_bytes());
    }

    #[test]
    fn a_wrong_count_is_an_error_not_a_panic() {
        let r = Mixed(b"abc", Native { units: Units::One(b""), class: Class::Ascii });
        let mut short = [0u8; 3];
        assert!(write_final(&r, UnitsMut::One(&mut short)).is_err());
        let mut long = [0u8; 30];
        assert!(write_final(&r, UnitsMut::One(&mut long)).is_err());
    }
}
