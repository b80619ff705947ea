//! memprompt's fuzz targets, shared by the libFuzzer binaries (fuzz_targets/) and the
//! corpus export (src/export_corpus.rs).
//!
//! Every target drives the pure-Rust API (no Python) with structured input and checks
//! that nothing panics and that the output holds its invariants: it is text Python can
//! decode (UTF-8 with surrogatepass), section spans lie inside it at their tags, the
//! exact parse gives back the memory section that the system message was built from,
//! parallel and serial rendering agree. Whether the output equals the pure-Python
//! reference is checked in Python: tests/test_fuzz_corpus.py replays the corpus.

pub mod check;
pub mod gen;
pub mod json;
pub mod targets;

/// A target: the fuzzer's bytes, and whether to describe the case as JSON for the export.
pub type Target = fn(&[u8], bool) -> Option<json::Json>;

/// The targets by name, in the order `fuzz/run.sh` runs them.
pub const TARGETS: &[(&str, Target)] = &[
    ("compile", targets::compile),
    ("git_memory", targets::git),
    ("skills", targets::skills),
    ("tree_view", targets::tree),
    ("prompt", targets::prompt),
    ("tool_rules", targets::rules),
];
