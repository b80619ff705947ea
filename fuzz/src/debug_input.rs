//! Shows what a corpus or crash file decodes to, and runs its target with the checks:
//! `cargo run --release --example debug_input TARGET FILE`.

use std::fmt::Debug;
use std::time::Instant;

use memprompt_fuzz::gen::FCompile;
use memprompt_fuzz::targets::{decode, FGit, FPrompt, FRules, FSkills, FTree};

fn show<T: Debug>(input: Option<T>) {
    let text = match input {
        Some(input) => format!("{input:#?}"),
        None => "(does not decode: the target ignores it)".to_owned(),
    };
    let cut = text.char_indices().nth(20_000).map_or(text.len(), |(i, _)| i);
    println!("{}", &text[..cut]);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, target, file] = &args[..] else {
        eprintln!("usage: debug_input TARGET FILE");
        std::process::exit(2);
    };
    let data = std::fs::read(file).expect("read the input file");
    match target.as_str() {
        "compile" => show(decode::<FCompile>(&data)),
        "git_memory" => show(decode::<FGit>(&data)),
        "skills" => show(decode::<FSkills>(&data)),
        "tree_view" => show(decode::<FTree>(&data)),
        "prompt" => show(decode::<FPrompt>(&data)),
        "tool_rules" => show(decode::<FRules>(&data)),
        other => {
            eprintln!("unknown target {other}");
            std::process::exit(2);
        }
    }
    let (_, run) = memprompt_fuzz::TARGETS.iter().find(|(name, _)| name == target).expect("a target");
    let started = Instant::now();
    run(&data, false);
    println!("checks passed in {:?}", started.elapsed());
}
