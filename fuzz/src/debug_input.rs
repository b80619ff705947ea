//! Prints the decoded input of a corpus or crash file (debugging aid).
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let data = std::fs::read(&args[2]).unwrap();
    match args[1].as_str() {
        "compile" => {
            let c: Option<memprompt_fuzz::gen::FCompile> = memprompt_fuzz::targets::decode(&data);
            if let Some(c) = c {
                println!("agent={:?} git={} anthropic={} sources={} files={} rules={}", c.agent_type, c.git_enabled, c.anthropic, c.sources.len(), c.file_blocks.len(), c.tool_usage_rules.is_some());
                for b in &c.blocks {
                    println!("block label={} bytes value={} bytes desc={}", b.label.0 .0.len(), b.value.0.len(), b.description.0.len());
                    println!("  label starts {:?}", String::from_utf8_lossy(&b.label.0 .0[..b.label.0 .0.len().min(60)]));
                }
            }
        }
        _ => {}
    }
    let t = std::time::Instant::now();
    for (name, run) in memprompt_fuzz::TARGETS {
        if *name == args[1] {
            run(&data, false);
        }
    }
    println!("took {:?}", t.elapsed());
}
