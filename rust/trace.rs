//! The compile cache's proof that nothing changed: what a compile read, as a record of
//! identities. Every value read is an immutable object (the binding checks that), and each
//! entry says what it was read as (a field, by its name's identity, or a place in the read
//! order: an argument, a list's end, a truth value). The reader's every step is decided by
//! what it read before, so two compiles that leave equal records read the same values as the
//! same things, in the same order, and give the same output. A value is anything with an id:
//! a plain id in Rust tests, the object itself in the binding (held, so that no other object
//! can take its id).

/// A value read, known by its identity.
pub trait Id {
    fn id(&self) -> usize;
}

impl Id for usize {
    fn id(&self) -> usize {
        *self
    }
}

/// One entry: what was read (`what`), and the value, or `None` where nothing was (an
/// attribute missing, a mark).
#[derive(Debug, Clone)]
struct Entry<V> {
    what: usize,
    value: Option<V>,
}

/// The entries, in the order they were read.
#[derive(Debug, Clone)]
pub struct Trace<V: Id = usize> {
    entries: Vec<Entry<V>>,
}

impl<V: Id> Default for Trace<V> {
    fn default() -> Self {
        Trace { entries: Vec::new() }
    }
}

impl<V: Id> Trace<V> {
    /// `value` was read as `what`.
    pub fn read(&mut self, what: usize, value: V) {
        self.entries.push(Entry { what, value: Some(value) });
    }

    /// `what` was looked for and missing, or is a mark (a list's end, a truth value).
    pub fn mark(&mut self, what: usize) {
        self.entries.push(Entry { what, value: None });
    }

    /// Room for `entries` more entries.
    pub fn reserve(&mut self, entries: usize) {
        self.entries.reserve(entries);
    }

    /// The last value read, if the last entry is one.
    pub fn last(&self) -> Option<&V> {
        self.entries.last().and_then(|e| e.value.as_ref())
    }

    /// The same values read as the same things in the same order: a compile of them gives the same output.
    pub fn same_as<W: Id>(&self, other: &Trace<W>) -> bool {
        self.entries.len() == other.entries.len()
            && self
                .entries
                .iter()
                .zip(&other.entries)
                .all(|(a, b)| a.what == b.what && a.value.as_ref().map(Id::id) == b.value.as_ref().map(Id::id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trace of `steps`: a letter is a value read as field 1 (its id from the letter),
    /// a digit a mark of that number.
    fn trace(steps: &str) -> Trace {
        let mut t: Trace = Trace::default();
        for step in steps.chars() {
            match step.to_digit(10) {
                Some(mark) => t.mark(mark as usize),
                None => t.read(1, step as usize),
            }
        }
        t
    }

    #[test]
    fn same_reads_in_the_same_shape_only() {
        assert!(trace("ab23").same_as(&trace("ab23")));
        assert!(!trace("ab23").same_as(&trace("ab32")), "marks swapped");
        assert!(!trace("ab2").same_as(&trace("a2b")), "a mark elsewhere");
        assert!(!trace("ab").same_as(&trace("ab2")), "a list that ends");
        assert!(!trace("ab").same_as(&trace("ac")), "another object");
        assert!(!trace("ab").same_as(&trace("a")), "fewer values");
    }

    #[test]
    fn the_same_value_read_as_another_thing_is_another_record() {
        // An argument, then a field; or the same object as that field, then the same field again.
        let (mut argument_first, mut field_twice): (Trace, Trace) = (Trace::default(), Trace::default());
        argument_first.read(1, 10);
        argument_first.read(2, 20);
        field_twice.read(2, 10);
        field_twice.read(2, 20);
        assert!(!argument_first.same_as(&field_twice));
        // A field found missing is not a mark of the same number, nor a value read.
        let (mut missing, mut read): (Trace, Trace) = (Trace::default(), Trace::default());
        missing.mark(2);
        read.read(2, 0);
        assert!(!missing.same_as(&read));
    }
}
