//! memprompt: Letta 0.16.8's memory prompt, rendered byte for byte in Rust.
//!
//! One module per section renderer; `text` holds Python's string semantics,
//! `fingerprint` the XXH3-128 fingerprints and the exact parse of a stored message,
//! `message_sections` where each section of a whole message lies, `file_tree` the one tree drawer, `out` the
//! sinks every renderer writes to, `compile_cache` a memory's last compile and the proofs
//! that it still holds, `lookups` where attribute lookup finds a field across calls,
//! `binding` the thin pyo3 layer.

// Every `unsafe` block says why it is sound (`// SAFETY:`); CPython internals live in binding/cpython.rs.
#![deny(clippy::undocumented_unsafe_blocks)]

pub mod batch;
pub mod blocks;
pub mod compile_cache;
pub mod directories;
pub mod error;
pub mod file_tree;
pub mod fingerprint;
pub mod git_memory;
pub mod line_numbered;
pub mod lookups;
pub mod memory;
pub mod message_sections;
pub mod metadata;
pub mod model;
pub mod out;
pub mod posix_path;
pub mod skills;
pub mod system_message;
pub mod text;
pub mod timestamp;
pub mod tool_rules;
pub mod trace;
pub mod tree_view;

mod binding;
