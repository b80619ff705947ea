//! Replays the committed corpus (fuzz/corpus/<target>/*) through every target, with
//! its checks, and writes fuzz/replay/<target>.jsonl: one line per corpus file that maps
//! to a Python call, with the input and the pure-Rust outcome. tests/test_fuzz_corpus.py
//! replays those lines through memprompt's Python API and the pure-Python reference.
//!
//! Usage: `cargo run --release --example export_corpus [FUZZ_DIR]` (default: this crate's dir).

use std::fs;
use std::path::PathBuf;

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    let replay = dir.join("replay");
    fs::create_dir_all(&replay).expect("create fuzz/replay");
    for (target, run) in memprompt_fuzz::TARGETS {
        let corpus = dir.join("corpus").join(target);
        let mut files: Vec<PathBuf> = match fs::read_dir(&corpus) {
            Ok(entries) => entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_file()).collect(),
            Err(_) => Vec::new(),
        };
        files.sort();
        let mut lines = String::new();
        let mut exported = 0;
        for path in &files {
            let data = fs::read(path).expect("read a corpus file");
            if let Some(json) = run(&data, true) {
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                let entry = memprompt_fuzz::json::Json::Obj(vec![
                    ("file", memprompt_fuzz::json::Json::Str(name)),
                    ("case", json),
                ]);
                entry.write(&mut lines);
                lines.push('\n');
                exported += 1;
            }
        }
        fs::write(replay.join(format!("{target}.jsonl")), lines).expect("write the replay file");
        println!("{target}: {} corpus files replayed, {exported} exported for the Python replay", files.len());
    }
}
