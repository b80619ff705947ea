//! The compile cache's proof that nothing changed: what a compile read, as an identity
//! trace. Every value read is an immutable object (the binding checks that), so the same
//! objects read in the same shape (the same attributes missing, the same lists ending
//! where they did) give the same output. A value is anything with an id: a plain id in
//! Rust tests, the object itself in the binding (held, so that no other object can take its id).

/// Where, among the values read, an attribute was missing or a list ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Missing(usize),
    ListEnd(usize),
}

/// A value read, known by its identity.
pub trait Id {
    fn id(&self) -> usize;
}

impl Id for usize {
    fn id(&self) -> usize {
        *self
    }
}

/// The values read, in order, and the marks between them.
#[derive(Debug, Clone)]
pub struct Trace<V: Id = usize> {
    values: Vec<V>,
    marks: Vec<Mark>,
}

impl<V: Id> Default for Trace<V> {
    fn default() -> Self {
        Trace { values: Vec::new(), marks: Vec::new() }
    }
}

impl<V: Id> Trace<V> {
    /// A value was read.
    pub fn read(&mut self, value: V) {
        self.values.push(value);
    }

    /// An attribute was missing.
    pub fn missing(&mut self) {
        self.marks.push(Mark::Missing(self.values.len()));
    }

    /// A list of inputs ended.
    pub fn list_end(&mut self) {
        self.marks.push(Mark::ListEnd(self.values.len()));
    }

    /// Room for `values` more values and `marks` more marks.
    pub fn reserve(&mut self, values: usize, marks: usize) {
        self.values.reserve(values);
        self.marks.reserve(marks);
    }

    /// The last value read.
    pub fn last(&self) -> Option<&V> {
        self.values.last()
    }

    /// The same values read in the same shape: a compile of them gives the same output.
    pub fn same_as<W: Id>(&self, other: &Trace<W>) -> bool {
        self.marks == other.marks
            && self.values.len() == other.values.len()
            && self.values.iter().zip(&other.values).all(|(a, b)| a.id() == b.id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(steps: &str) -> Trace {
        let mut t: Trace = Trace::default();
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
        let (mut split, mut joined): (Trace, Trace) = (Trace::default(), Trace::default());
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
