//! The compile cache's proof that nothing changed: what a compile read, as an identity
//! trace. Every value read is an immutable object (the binding checks that), so the same
//! objects read in the same shape (the same attributes missing, the same lists ending
//! where they did) give the same output. Objects are plain ids here; the binding holds
//! the objects themselves alive beside the trace, so that no other object can take an id.

/// Where, among the values read, an attribute was missing or a list ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Missing(usize),
    ListEnd(usize),
}

/// The ids of the values read, in order, and the marks between them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trace {
    ids: Vec<usize>,
    marks: Vec<Mark>,
}

impl Trace {
    /// A value was read.
    pub fn read(&mut self, id: usize) {
        self.ids.push(id);
    }

    /// An attribute was missing.
    pub fn missing(&mut self) {
        self.marks.push(Mark::Missing(self.ids.len()));
    }

    /// A list of inputs ended.
    pub fn list_end(&mut self) {
        self.marks.push(Mark::ListEnd(self.ids.len()));
    }

    /// Room for `n` more values.
    pub fn reserve(&mut self, n: usize) {
        self.ids.reserve(n);
    }

    /// The same values read in the same shape: a compile of them gives the same output.
    pub fn same_as(&self, other: &Trace) -> bool {
        self == other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(steps: &str) -> Trace {
        let mut t = Trace::default();
        for (i, step) in steps.chars().enumerate() {
            match step {
                'm' => t.missing(),
                'e' => t.list_end(),
                id => t.read(id as usize * 1000 + i),
            }
        }
        t
    }

    #[test]
    fn same_reads_in_the_same_shape_only() {
        assert!(trace("abem").same_as(&trace("abem")));
        assert!(!trace("abem").same_as(&trace("abme")), "a mark elsewhere");
        assert!(!trace("ab").same_as(&trace("abe")), "a list that ends");
        assert!(!trace("ab").same_as(&trace("ac")), "another object");
        assert!(!trace("ab").same_as(&trace("a")), "fewer values");
        // The same ids with a list boundary moved: `[a][b]` is not `[a b][]`.
        let (mut split, mut joined) = (Trace::default(), Trace::default());
        for t in [&mut split, &mut joined] {
            t.read(1);
        }
        split.list_end();
        split.read(2);
        joined.read(2);
        joined.list_end();
        split.list_end();
        joined.list_end();
        assert!(!split.same_as(&joined));
    }
}
