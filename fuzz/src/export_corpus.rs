//! Replays the committed corpus (fuzz/corpus/<target>/*) through every target, with
//! its checks, and writes fuzz/replay/<target>.jsonl (run.sh compresses it): one line per corpus file, with the
//! input and the pure-Rust outcome when the input maps to a Python call. Run by
//! `fuzz/run.sh export`. tests/test_fuzz_corpus.py replays those lines through
//! memprompt's Python API and the pure-Python reference.
//!
//! Usage: `cargo run --release --example export_corpus [FUZZ_DIR]` (default: this crate's dir).

use std::fs;
use std::path::PathBuf;

use memprompt_fuzz::json::Json;

fn main() {
    let dir = std::env::args().nth(1).map(PathBuf::from).unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
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
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            // Every file is listed (so the replay can tell a stale export); `case` is null
            // when the input has no Python equivalent (another pytz zone, a rendered rule).
            let case = run(&data, true);
            exported += usize::from(case.is_some());
            let entry = Json::Obj(vec![("file", Json::Str(name)), ("case", case.unwrap_or(Json::Null))]);
            entry.write(&mut lines);
            lines.push('\n');
        }
        fs::write(replay.join(format!("{target}.jsonl")), lines).expect("write the replay file");
        println!("{target}: {} corpus files replayed, {exported} exported for the Python replay", files.len());
    }
}
