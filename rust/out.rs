//! The output buffer every renderer writes into.

use crate::error::{RenderError, RenderResult};
use crate::model::Int;

/// A named part of the output, in byte offsets: `<tool_usage_rules>` to `</tool_usage_rules>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Section {
    pub name: &'static str,
    pub start: usize,
    pub end: usize,
}

/// Rendered text as surrogatepass UTF-8 (see `text`), and where its sections are.
#[derive(Debug, Default)]
pub struct Out {
    pub buf: Vec<u8>,
    pub sections: Vec<Section>,
}

impl Out {
    pub fn with_capacity(n: usize) -> Self {
        Out { buf: Vec::with_capacity(n), sections: Vec::new() }
    }

    /// An empty buffer of at least `capacity` bytes, reusing `buf`'s allocation.
    pub fn reusing(mut buf: Vec<u8>, capacity: usize) -> Self {
        buf.clear();
        buf.reserve(capacity);
        Out { buf, sections: Vec::new() }
    }

    /// Room for `additional` more bytes, or `MemoryError`: a failed allocation would abort the process.
    pub fn try_reserve(&mut self, additional: usize) -> RenderResult {
        self.buf.try_reserve(additional).map_err(|_| RenderError::Memory)
    }

    /// Writes `lines` once there is room for all of them, so that output growing faster
    /// than its input fails as `MemoryError` instead of aborting.
    pub fn write_lines(&mut self, lines: &impl Lines) -> RenderResult {
        let mut size = Measure(0);
        lines.each(&mut size);
        self.try_reserve(size.0)?;
        let start = self.len();
        lines.each(self);
        debug_assert_eq!(self.len() - start, size.0, "a line's size is what it writes");
        Ok(())
    }

    /// Records that section `name` runs from byte `start` to the end of what is written so far.
    pub fn section(&mut self, name: &'static str, start: usize) {
        self.sections.push(Section { name, start, end: self.buf.len() });
    }

    #[inline]
    pub fn push(&mut self, s: &[u8]) {
        self.buf.extend_from_slice(s);
    }

    /// Writes `n` in decimal, as Python's `str(int)`.
    pub fn int(&mut self, n: i64) {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        let mut m = n.unsigned_abs();
        loop {
            i -= 1;
            digits[i] = b'0' + (m % 10) as u8;
            m /= 10;
            if m == 0 {
                break;
            }
        }
        if n < 0 {
            self.buf.push(b'-');
        }
        self.push(&digits[i..]);
    }

    pub fn usize(&mut self, n: usize) {
        self.int(n as i64);
    }

    pub fn num(&mut self, n: &Int) {
        match n {
            Int::Small(v) => self.int(*v),
            Int::Rendered(t) => self.push(t),
        }
    }

    pub fn len(&self) -> usize {
        self.buf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
}

/// A line of output that knows its size before it is written.
pub trait Measured {
    /// How many bytes `write` writes.
    fn size(&self) -> usize;
    fn write(&self, out: &mut Out);
}

/// Where lines go: into a count of their bytes, or into the output.
pub trait Sink {
    fn line(&mut self, line: &impl Measured);
}

/// The number of bytes of the lines given to it.
struct Measure(usize);

impl Sink for Measure {
    #[inline]
    fn line(&mut self, line: &impl Measured) {
        self.0 = self.0.saturating_add(line.size());
    }
}

impl Sink for Out {
    #[inline]
    fn line(&mut self, line: &impl Measured) {
        line.write(self);
    }
}

/// Output made of lines, given to a sink the same each time: measured, then written.
pub trait Lines {
    fn each(&self, sink: &mut impl Sink);
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
    fn write_to(&self, out: &mut Out);
}

impl Piece for &str {
    #[inline]
    fn write_to(&self, out: &mut Out) {
        out.push(self.as_bytes());
    }
}

impl Piece for &[u8] {
    #[inline]
    fn write_to(&self, out: &mut Out) {
        out.push(self);
    }
}

impl Piece for std::borrow::Cow<'_, [u8]> {
    #[inline]
    fn write_to(&self, out: &mut Out) {
        out.push(self);
    }
}

impl Piece for usize {
    #[inline]
    fn write_to(&self, out: &mut Out) {
        out.usize(*self);
    }
}

impl Piece for Int<'_> {
    #[inline]
    fn write_to(&self, out: &mut Out) {
        out.num(self);
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
    }
}
