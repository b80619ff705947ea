//! One function per fuzz target: decode the input, render, check the invariants, and
//! (for the corpus export) describe the input and the outcome as JSON.

use arbitrary::{Arbitrary, Result, Unstructured};
use memprompt::error::RenderResult;
use memprompt::fingerprint::{stored_memory_section, METADATA_START};
use memprompt::message_sections::message_sections;
use memprompt::metadata::Metadata;
use memprompt::model::Text as TextCow;
use memprompt::model::{Block, Chars, ClientSkill, CompileInput, Listed, ToolUsageRules};
use memprompt::out::{Final, Out, Render, Section, Sink};
use memprompt::posix_path;
use memprompt::skills::{self, Cwd, Rendered};
use memprompt::system_message::{SystemMessage, PLACEHOLDER};
use memprompt::timestamp::{self, DateTime, Local, Zone};
use memprompt::tool_rules::{self, Group, Prompt, RuleKind, ToolRule};
use memprompt::tree_view::TreeView;
use memprompt::{batch, git_memory, memory, system_message, tree_view};

use crate::check;
use crate::gen::{blocks, pick, vec_of, FBlock, FCompile, FInt, FSkill, Label, Text};
use crate::json::Json;

/// The input a target reads from the fuzzer's bytes, as `fuzz_target!` would decode it.
pub fn decode<'a, T: Arbitrary<'a>>(data: &'a [u8]) -> Option<T> {
    T::arbitrary_take_rest(Unstructured::new(data)).ok()
}

fn block_json(b: &FBlock) -> Json {
    Json::Obj(vec![
        ("label", Json::text(&b.label.0)),
        ("value", Json::text(&b.value)),
        ("description", Json::text(&b.description)),
        ("limit", Json::int(&b.limit)),
        ("read_only", Json::Bool(b.read_only)),
    ])
}

fn blocks_json(list: &[FBlock]) -> Json {
    Json::List(list.iter().map(block_json).collect())
}

fn agent_type_json(agent_type: &str) -> Json {
    if agent_type.is_empty() {
        Json::Null
    } else {
        Json::Str(agent_type.into())
    }
}

/// Git memory alone, as a `Render`.
struct Git<'a>(&'a [Block<'a>]);

impl Render for Git<'_> {
    fn render(&self, out: &mut impl Sink) -> RenderResult {
        git_memory::render(out, self.0)
    }
}

/// The skills listing in a known current directory, as a `Render`.
struct SkillsIn<'a> {
    blocks: &'a [Listed<'a>],
    client: &'a [ClientSkill<'a>],
    cwd: &'a [u8],
}

impl Render for SkillsIn<'_> {
    fn render(&self, out: &mut impl Sink) -> RenderResult {
        skills::render_with_cwd(out, self.blocks, self.client, Cwd::Known(self.cwd)).map(drop)
    }
}

// --- compile: Memory.compile in every mode ------------------------------------------

fn render_compile(input: &memprompt::model::CompileInput) -> (Out, memprompt::error::RenderResult) {
    let mut out = Out::default();
    let result = memory::Compile::prepare(input).and_then(|c| memory::compile(&mut out, &c));
    (out, result)
}

/// Every value of `input` (blocks, then file blocks) as Python would hold it, in its own width.
fn held_values(input: &CompileInput) -> Vec<Final> {
    let values = input.blocks.iter().chain(input.file_blocks.iter().map(|f| &f.block)).map(|b| match b.value {
        Chars::Utf8(utf8) => utf8,
        Chars::Native(_) => unreachable!("generated values are UTF-8"),
    });
    values.map(|v| Final::of(v).expect("a value renders")).collect()
}

/// `input` with its values replaced by `held`'s code units.
fn with_native_values<'a>(input: &CompileInput<'a>, held: &'a [Final]) -> CompileInput<'a> {
    let mut native = input.clone();
    let blocks = native.blocks.iter_mut().chain(native.file_blocks.iter_mut().map(|f| &mut f.block));
    for (block, value) in blocks.zip(held) {
        block.value = Chars::Native(value.native());
    }
    native
}

pub fn compile(data: &[u8], export: bool) -> Option<Json> {
    let c: FCompile = decode(data)?;
    let input = c.input();
    let (out, result) = render_compile(&input);
    let react = memory::is_react(&input.agent_type);
    let line_numbered = input.anthropic
        && [&b"sleeptime_agent"[..], b"memgpt_v2_agent", b"letta_v1_agent"].contains(&&*input.agent_type);
    match &result {
        Ok(()) => {
            check::valid_text(&out.buf);
            check::sections(&out);
            check::final_width(&memory::Compile::prepare(&input).expect("prepared once already"), &out);
            let has = |name: &str| out.sections.iter().any(|s| s.name == name);
            assert_eq!(has("tool_usage_rules"), input.tool_usage_rules.is_some());
            assert_eq!(has("directories"), !input.sources.is_empty());
            if react || input.git_enabled {
                assert!(!has("memory_blocks"), "no <memory_blocks> section in this mode");
            } else if line_numbered {
                assert!(has("memory_blocks") && out.sections[0].start == 0, "line numbers keep their wrapper");
            } else {
                assert_eq!(has("memory_blocks"), !input.blocks.is_empty());
            }
            if react && !input.git_enabled {
                assert!(!out.buf.starts_with(b"<memory_blocks>"));
            }
            if let Some(last) = out.sections.last() {
                if last.name == "directories" {
                    assert_eq!(last.end, out.buf.len());
                }
            }
            let (again, _) = render_compile(&input);
            assert_eq!(again.buf, out.buf, "rendering is deterministic");
            let held = held_values(&input);
            let native = with_native_values(&input, &held);
            let (native_out, _) = render_compile(&native);
            assert_eq!(native_out.buf, out.buf, "values held in their own width (as from Python) render the same");
            check::final_width(&memory::Compile::prepare(&native).expect("prepared once already"), &out);
            // A message built around the memory is cut where its sections are, by their spans: whatever the
            // blocks hold, each section of the message is that section of the memory.
            let prepared = memory::Compile::prepare(&input).expect("prepared once already");
            let fin = Final::of(&prepared).expect("rendered once already");
            let meta = b"<memory_metadata>\n</memory_metadata>";
            let system = SystemMessage::new(Chars::Utf8(b"S"), Chars::Native(fin.native()), Chars::Utf8(meta), true);
            let message = Final::of(&system).expect("a system message always renders");
            let template = Final::of(&b"S"[..]).expect("text");
            let sections = message_sections(template.native(), message.native(), fin.native(), &fin.sections)
                .expect("a message holds the sections of its memory");
            check::tiled(&sections, message.native());
            let inner: Vec<&str> =
                sections.iter().map(|s| s.name).filter(|n| fin.sections.iter().any(|f| f.name == *n)).collect();
            assert_eq!(
                inner,
                fin.sections.iter().map(|s| s.name).collect::<Vec<_>>(),
                "every span of the memory is a section"
            );
        }
        Err(_) => assert!(input.git_enabled && !react, "only git memory's external tree can fail"),
    }
    if c.batch {
        let inputs = vec![input.clone(); 5];
        let parallel = batch::map(&inputs, |i| {
            let (o, r) = render_compile(i);
            r.map(|_| o.buf)
        })
        .expect("no render thread fails");
        for p in parallel {
            assert_eq!(p.as_ref().map(Vec::as_slice), result.as_ref().map(|_| out.buf.as_slice()));
        }
    }
    if !export {
        return None;
    }
    let fallback = input.git_enabled && !react && git_memory::needs_reference_fallback(&input.blocks);
    let file_blocks = c
        .file_blocks
        .iter()
        .map(|f| {
            let Json::Obj(mut fields) = block_json(&f.block) else { unreachable!() };
            fields.push(("source_id", Json::opt_text(&f.source_id)));
            Json::Obj(fields)
        })
        .collect();
    let sources = c
        .sources
        .iter()
        .map(|s| {
            Json::Obj(vec![
                ("id", Json::opt_text(&s.id)),
                ("name", Json::text(&s.name)),
                ("description", Json::text(&s.description)),
                ("instructions", Json::text(&s.instructions)),
            ])
        })
        .collect();
    let rules = c.tool_usage_rules.as_ref().map_or(Json::Null, |r| {
        Json::Obj(vec![("description", Json::text(&r.description)), ("value", Json::text(&r.value))])
    });
    Some(Json::Obj(vec![
        ("blocks", blocks_json(&c.blocks)),
        ("file_blocks", Json::List(file_blocks)),
        ("agent_type", agent_type_json(c.agent_type)),
        ("git_enabled", Json::Bool(c.git_enabled)),
        ("anthropic", Json::Bool(c.anthropic)),
        ("tool_usage_rules", rules),
        ("sources", Json::List(sources)),
        ("max_files_open", c.max_files_open.as_ref().map_or(Json::Null, Json::int)),
        ("expected", Json::outcome((!fallback).then_some(result.as_ref().map(|_| &out.buf[..])))),
    ]))
}

// --- git_memory: <self>, <memory>, <external_projection> ------------------------------

/// Blocks for git memory: most labels under `system/`.
#[derive(Debug)]
pub struct FGit {
    pub blocks: Vec<FBlock>,
}

impl<'a> Arbitrary<'a> for FGit {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let mut blocks = vec_of(u, 40, FBlock::arbitrary)?;
        for b in &mut blocks {
            if u.ratio(1, 2)? && !b.label.0 .0.starts_with(b"system/") {
                b.label = Label(Text([&b"system/"[..], &b.label.0 .0].concat()));
            }
        }
        Ok(FGit { blocks })
    }
}

pub fn git(data: &[u8], export: bool) -> Option<Json> {
    let g: FGit = decode(data)?;
    let list = blocks(&g.blocks);
    let fallback = git_memory::needs_reference_fallback(&list);
    let mut out = Out::default();
    let result = git_memory::render(&mut out, &list);
    if result.is_ok() {
        check::valid_text(&out.buf);
        let has_system = list.iter().any(|b| b.label.starts_with(b"system/"));
        assert_eq!(out.buf.is_empty(), !has_system, "git memory writes exactly when a system/ block exists");
        let mut again = Out::default();
        git_memory::render(&mut again, &list).expect("deterministic");
        assert_eq!(again.buf, out.buf);
        check::final_width(&Git(&list), &out);
    }
    export.then(|| {
        Json::Obj(vec![
            ("blocks", blocks_json(&g.blocks)),
            ("expected", Json::outcome((!fallback).then_some(result.as_ref().map(|_| &out.buf[..])))),
        ])
    })
}

// --- skills: <available_skills> ------------------------------------------------------

const CWDS: &[&str] = &["/", "/work", "/a/b/c/d", "/home/user/project"];

#[derive(Debug)]
pub struct FSkills {
    pub blocks: Vec<FBlock>,
    pub skills: Vec<FSkill>,
    pub cwd: &'static str,
}

impl<'a> Arbitrary<'a> for FSkills {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let cwd = pick(u, CWDS)?;
        let skills = vec_of(u, 12, FSkill::arbitrary)?;
        let mut blocks = vec_of(u, 12, FBlock::arbitrary)?;
        for b in &mut blocks {
            if u.ratio(2, 3)? && !b.label.0 .0.starts_with(b"skills/") {
                b.label = Label(Text([&b"skills/"[..], &b.label.0 .0].concat()));
            }
        }
        Ok(FSkills { blocks, skills, cwd })
    }
}

pub fn skills(data: &[u8], export: bool) -> Option<Json> {
    let s: FSkills = decode(data)?;
    let owned = blocks(&s.blocks);
    let list: Vec<Listed> = owned.iter().map(Block::listed).collect();
    let client: Vec<_> = s.skills.iter().map(FSkill::skill).collect();
    const BEFORE: &[u8] = b"before";
    let mut out = Out::default();
    out.push(BEFORE);
    let unknown = skills::render_with_cwd(&mut out, &list, &client, Cwd::Unknown);
    match &unknown {
        Ok(Rendered::Done) => {
            assert!(out.buf.starts_with(BEFORE));
            check::valid_text(&out.buf);
        }
        Ok(Rendered::NeedsCwd) | Err(_) => assert_eq!(out.buf, BEFORE, "nothing written on an error or NeedsCwd"),
    }
    let mut known = Out::default();
    known.push(BEFORE);
    let with_cwd = skills::render_with_cwd(&mut known, &list, &client, Cwd::Known(s.cwd.as_bytes()));
    match &with_cwd {
        Ok(Rendered::Done) => {
            check::valid_text(&known.buf);
            let listing = Out::of(&SkillsIn { blocks: &list, client: &client, cwd: s.cwd.as_bytes() }).unwrap();
            assert_eq!(known.buf[BEFORE.len()..], listing.buf, "the Render is the listing");
            check::final_width(&SkillsIn { blocks: &list, client: &client, cwd: s.cwd.as_bytes() }, &listing);
        }
        Ok(Rendered::NeedsCwd) => panic!("a known current directory is never asked for"),
        Err(_) => assert_eq!(known.buf, BEFORE),
    }
    if matches!(unknown, Ok(Rendered::Done)) {
        assert_eq!(known.buf, out.buf, "the current directory was not used, so it does not matter");
    }
    if let Err(e) = &unknown {
        assert_eq!(with_cwd.as_ref().err(), Some(e), "errors come before any use of the directory");
    }
    for skill in &s.skills {
        let p = &skill.location.0;
        let norm = posix_path::normpath(p);
        assert_eq!(posix_path::normpath(&norm), norm, "normpath is idempotent");
        check::valid_text(&norm);
        check::valid_text(posix_path::dirname(p));
        assert!(!posix_path::basename(p).contains(&b'/'));
        let _ = posix_path::relpath_in(p, posix_path::dirname(p), s.cwd.as_bytes());
        let _ = posix_path::abspath_in(p, s.cwd.as_bytes());
    }
    export.then(|| {
        let expected = match &unknown {
            Ok(Rendered::NeedsCwd) => None,
            Ok(Rendered::Done) => Some(Ok(&out.buf[BEFORE.len()..])),
            Err(e) => Some(Err(e)),
        };
        let client = s
            .skills
            .iter()
            .map(|k| {
                Json::Obj(vec![
                    ("name", Json::text(&k.name)),
                    ("description", Json::text(&k.description)),
                    ("location", Json::text(&k.location)),
                ])
            })
            .collect();
        Json::Obj(vec![
            ("blocks", blocks_json(&s.blocks)),
            ("client_skills", Json::List(client)),
            ("expected", Json::outcome(expected)),
        ])
    })
}

// --- tree_view: <memory_filesystem> --------------------------------------------------

#[derive(Debug, Arbitrary)]
pub struct FTree {
    pub has_client_skills: bool,
    pub blocks: Vec<FBlock>,
}

pub fn tree(data: &[u8], export: bool) -> Option<Json> {
    let t: FTree = decode(data)?;
    let owned = blocks(&t.blocks);
    let list: Vec<Listed> = owned.iter().map(Block::listed).collect();
    let mut out = Out::default();
    let result = tree_view::render(&mut out, &list, t.has_client_skills);
    if result.is_ok() {
        check::valid_text(&out.buf);
        check::final_width(&TreeView::new(&list, t.has_client_skills), &out);
        assert_eq!(out.buf.is_empty(), list.is_empty() && !t.has_client_skills);
        if !out.buf.is_empty() {
            assert!(out.buf.starts_with(b"\n\n<memory_filesystem>\n"));
            assert!(out.buf.ends_with(b"</memory_filesystem>"));
        }
    }
    export.then(|| {
        Json::Obj(vec![
            ("blocks", blocks_json(&t.blocks)),
            ("has_client_skills", Json::Bool(t.has_client_skills)),
            ("expected", Json::outcome(Some(result.as_ref().map(|_| &out.buf[..])))),
        ])
    })
}

// --- prompt: <memory_metadata>, timestamps, the system message and its exact parse ----

const TEMPLATE_PIECES: &[&str] = &[
    "{CORE_MEMORY}",
    "{CORE_MEMORY",
    "CORE_MEMORY}",
    "{{CORE_MEMORY}}",
    "{",
    "}",
    "{}",
    "\n\n",
    "You are X.",
    "{x}",
    "{a}",
];

fn template(u: &mut Unstructured<'_>) -> Result<Text> {
    let mut t = Vec::new();
    for _ in 0..u.int_in_range(0..=6)? {
        if u.ratio(1, 2)? {
            t.extend_from_slice(pick(u, TEMPLATE_PIECES)?.as_bytes());
        } else {
            t.extend_from_slice(&Text::build(u, 4)?.0);
        }
    }
    Ok(Text(t))
}

fn days_in_month(year: i32, month: u8) -> u8 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        _ => 31,
    }
}

fn datetime(u: &mut Unstructured<'_>) -> Result<DateTime> {
    let year = if u.ratio(1, 4)? { u.int_in_range(1..=9999)? } else { u.int_in_range(1900..=2100)? };
    let month = u.int_in_range(1..=12)?;
    Ok(DateTime {
        year,
        month,
        day: u.int_in_range(1..=days_in_month(year, month))?,
        hour: u.int_in_range(0..=23)?,
        minute: u.int_in_range(0..=59)?,
        second: u.int_in_range(0..=59)?,
        microsecond: u.int_in_range(0..=999_999)?,
    })
}

const ZONE_NAMES: &[&str] = &["EST", "EDT", "LMT", "+0530", "GMT", "CET", "", "-00"];

fn local(u: &mut Unstructured<'_>) -> Result<Local> {
    let offset = if u.ratio(1, 3)? {
        u.int_in_range(-86_399_999_999..=86_399_999_999)?
    } else {
        i64::from(u.int_in_range(-24 * 4..=24 * 4)?) * 15 * 60 * 1_000_000
    };
    Ok(Local::new(pick(u, ZONE_NAMES)?.as_bytes(), offset))
}

#[derive(Debug)]
pub enum FZone {
    /// A naive datetime and a falsy timezone: formatted as it is.
    Naive,
    Utc,
    Zone(Zone),
}

fn zone(u: &mut Unstructured<'_>) -> Result<FZone> {
    Ok(match u.int_in_range(0..=3u8)? {
        0 => FZone::Naive,
        1 => FZone::Utc,
        2 => FZone::Zone(Zone::Fixed(local(u)?)),
        _ => {
            let n = u.int_in_range(1..=8)?;
            let mut times = Vec::with_capacity(n);
            let mut infos = Vec::with_capacity(n);
            for _ in 0..n {
                times.push(datetime(u)?.to_micros());
                infos.push(local(u)?);
            }
            times.sort_unstable();
            match Zone::transitions(times, infos, local(u)?) {
                Some(z) => FZone::Zone(z),
                None => FZone::Utc,
            }
        }
    })
}

#[derive(Debug)]
pub struct FPrompt {
    pub template: Text,
    pub memory: Text,
    pub append: bool,
    pub agent_id: Text,
    pub conversation_id: Text,
    pub previous_message_count: Text,
    pub archival_memory_size: Option<FInt>,
    pub archive_tags: Option<Vec<Text>>,
    pub when: DateTime,
    pub zone: FZone,
    /// Any message, for the exact parse alone.
    pub message: Text,
}

impl<'a> Arbitrary<'a> for FPrompt {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        let template = template(u)?;
        let append = !u.ratio(1, 4)?;
        let when = datetime(u)?;
        let zone = zone(u)?;
        let archival_memory_size = if u.ratio(1, 4)? { None } else { Some(FInt::arbitrary(u)?) };
        let archive_tags = if u.ratio(1, 2)? { None } else { Some(vec_of(u, 4, |u| Text::build(u, 4))?) };
        let archive_tags = archive_tags.filter(|tags| !tags.is_empty());
        Ok(FPrompt {
            template,
            append,
            when,
            zone,
            archival_memory_size,
            archive_tags,
            agent_id: Text::build(u, 4)?,
            conversation_id: Text::build(u, 3)?,
            previous_message_count: Text::build(u, 2)?,
            memory: Text::build(u, 16)?,
            message: Text::build(u, 16)?,
        })
    }
}

const VARIABLES: &[(&[u8], &[u8])] = &[(b"x", b"X!"), (b"a", b"{a}"), (b"CORE_MEMORY", b"M")];

pub fn prompt(data: &[u8], export: bool) -> Option<Json> {
    let p: FPrompt = decode(data)?;
    assert_eq!(DateTime::from_micros(p.when.to_micros()), Some(p.when), "micros round trip");
    let mut stamp = Out::default();
    let converted = match &p.zone {
        FZone::Naive => {
            timestamp::write(&mut stamp, &p.when, None, None);
            Ok(())
        }
        FZone::Utc => Zone::Utc.from_utc(&p.when).map(|(local, name, offset)| {
            timestamp::write(&mut stamp, &local, Some(name), Some(offset));
        }),
        FZone::Zone(z) => z.from_utc(&p.when).map(|(local, name, offset)| {
            timestamp::write(&mut stamp, &local, Some(name), Some(offset));
        }),
    };
    check::valid_text(&stamp.buf);

    let meta = Metadata {
        agent_id: p.agent_id.cow(),
        conversation_id: p.conversation_id.cow(),
        timestamp: TextCow::from(&stamp.buf[..]),
        previous_message_count: p.previous_message_count.cow(),
        archival_memory_size: p.archival_memory_size.as_ref().map(FInt::int),
        archive_tags: p.archive_tags.as_ref().map(|tags| tags.iter().map(Text::cow).collect::<Vec<TextCow>>()),
    };
    let block = Out::of(&meta).unwrap();
    check::valid_text(&block.buf);
    check::final_width(&meta, &block);
    assert!(block.buf.starts_with(b"<memory_metadata>\n") && block.buf.ends_with(b"\n</memory_metadata>"));

    let template = &p.template.0;
    let memory = &p.memory.0;
    let system = SystemMessage::new(Chars::Utf8(template), Chars::Utf8(memory), Chars::Utf8(&block.buf), p.append);
    let message = Out::of(&system).expect("a system message always renders");
    check::valid_text(&message.buf);
    check::final_width(&system, &message);
    // The template and the memory as Python holds them (in their own width) give the same message.
    let (held_template, held) = (Final::of(&template[..]).unwrap(), Final::of(&memory[..]).unwrap());
    let native = SystemMessage::new(
        Chars::Native(held_template.native()),
        Chars::Native(held.native()),
        Chars::Utf8(&block.buf),
        p.append,
    );
    assert_eq!(Out::of(&native).unwrap().buf, message.buf, "a native template and memory give the same text");
    check::final_width(&native, &message);
    // The exact parse, reading the template and the message as Python holds them (each in its
    // own width), gives back the memory section, whatever it holds, unless the metadata itself
    // holds the marker the parse looks for (a tag or id with "\n\n<memory_metadata>").
    let stored_in = |message: &[u8]| {
        let message = Final::of(message).expect("a message is text");
        let range = stored_memory_section(held_template.native(), message.native())?;
        assert!(range.start <= range.end && range.end <= message.native().len(), "the section is part of the message");
        let mut section = Out::default();
        section.push_native(message.native().slice(range.start, range.end));
        Some(section.buf)
    };
    let stored = stored_in(&message.buf);
    let placed = p.append || contains(template, PLACEHOLDER);
    let clean_metadata = !contains(&block.buf, METADATA_START);
    if placed && clean_metadata {
        assert_eq!(stored.as_deref(), Some(&memory[..]), "stored_memory_section gives back the memory section");
    }
    if placed {
        // The whole message is cut into the template's text, the memory (one section here) and the
        // metadata block, with nothing but "\n\n" between them: at the memory's length, so a metadata
        // block holding its own tag is cut right too.
        let held_message = Final::of(&message.buf[..]).expect("a message is text");
        let whole = Section { name: memory::section::MEMORY_BLOCKS, start: 0, end: held.native().len() };
        let spans = if memory.is_empty() { vec![] } else { vec![whole] };
        let sections = message_sections(held_template.native(), held_message.native(), held.native(), &spans)
            .expect("a built message has its sections");
        check::tiled(&sections, held_message.native());
    }
    let raw = stored_in(&p.message.0);

    let formatted =
        system_message::safe_format(template, |key| VARIABLES.iter().find(|(k, _)| *k == key).map(|(_, v)| *v));
    if let Some(f) = &formatted {
        check::valid_text(&f.buf);
    }
    if !export {
        return None;
    }
    // Only naive and UTC timestamps map to a Python call; other zones come from pytz's tables.
    let (when, timezone) = match &p.zone {
        FZone::Naive => (false, Json::Null),
        FZone::Utc => (true, Json::Str("UTC".into())),
        FZone::Zone(_) => return None,
    };
    let d = &p.when;
    let expected = converted.as_ref().map(|_| &message.buf[..]);
    Some(Json::Obj(vec![
        ("template", Json::text(&p.template)),
        ("memory", Json::text(&p.memory)),
        ("append", Json::Bool(p.append)),
        ("agent_id", Json::text(&p.agent_id)),
        ("conversation_id", Json::text(&p.conversation_id)),
        ("previous_message_count", Json::text(&p.previous_message_count)),
        ("archival_memory_size", p.archival_memory_size.as_ref().map_or(Json::Null, Json::int)),
        (
            "archive_tags",
            p.archive_tags.as_ref().map_or(Json::Null, |tags| Json::List(tags.iter().map(Json::text).collect())),
        ),
        (
            "when",
            Json::List(
                [d.year, d.month.into(), d.day.into(), d.hour.into(), d.minute.into(), d.second.into()]
                    .iter()
                    .map(|&n| Json::Num(n.into()))
                    .chain([Json::Num(d.microsecond.into())])
                    .collect(),
            ),
        ),
        ("utc", Json::Bool(when)),
        ("timezone", timezone),
        ("message", Json::text(&p.message)),
        ("expected", Json::outcome(Some(expected))),
        ("expected_stored", stored.as_deref().map_or(Json::Null, Json::hex)),
        ("expected_raw_stored", raw.as_deref().map_or(Json::Null, Json::hex)),
        ("expected_safe_format", formatted.as_ref().map_or(Json::Null, |f| Json::hex(&f.buf))),
    ]))
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

// --- tool_rules: ToolRulesSolver.compile_tool_rule_prompts -----------------------------

const TOOL_NAMES: &[&str] = &["send_message", "search", "a", "", "x y", "{CORE_MEMORY}"];

#[derive(Debug)]
pub enum FRule {
    Rule { kind: RuleKind, tool_name: Text, children: Vec<Text>, max_count_limit: FInt },
    Rendered { group: Group, text: Option<Text> },
}

impl<'a> Arbitrary<'a> for FRule {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        if u.ratio(1, 8)? {
            let group = Group::ALL[u.choose_index(Group::ALL.len())?];
            let text = if u.ratio(1, 4)? { None } else { Some(Text::build(u, 6)?) };
            return Ok(FRule::Rendered { group, text });
        }
        let kind = RuleKind::ALL[u.choose_index(RuleKind::ALL.len())?];
        let tool_name =
            if u.ratio(1, 4)? { Text::build(u, 5)? } else { Text(pick(u, TOOL_NAMES)?.as_bytes().to_vec()) };
        let children = if kind.has_children() { vec_of(u, 4, |u| Text::build(u, 3))? } else { Vec::new() };
        let max_count_limit = FInt::arbitrary(u)?;
        Ok(FRule::Rule { kind, tool_name, children, max_count_limit })
    }
}

#[derive(Debug)]
pub struct FRules(pub Vec<FRule>);

impl<'a> Arbitrary<'a> for FRules {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(FRules(vec_of(u, 12, FRule::arbitrary)?))
    }
}

pub fn rules(data: &[u8], export: bool) -> Option<Json> {
    let FRules(rules) = decode(data)?;
    let prompts: Vec<Prompt> = rules
        .iter()
        .map(|r| match r {
            FRule::Rule { kind, tool_name, children, max_count_limit } => {
                let mut rule = ToolRule::new(*kind, tool_name.cow());
                rule.children = children.iter().map(Text::cow).collect();
                rule.max_count_limit = max_count_limit.int();
                Prompt::Rule(rule)
            }
            FRule::Rendered { group, text } => Prompt::Rendered { group: *group, text: text.as_ref().map(Text::cow) },
        })
        .collect();
    let value = tool_rules::compile_tool_rule_prompts(&prompts);
    if let Some(v) = &value {
        check::valid_text(v);
        assert!(!v.contains(&0), "Letta's Block drops NUL characters");
        let block = ToolUsageRules {
            description: TextCow::from(tool_rules::DESCRIPTION.as_bytes()),
            value: TextCow::from(&v[..]),
        };
        let mut section = Out::default();
        tool_rules::render_section(&mut section, &block);
        check::valid_text(&section.buf);
    }
    for p in &prompts {
        if let Prompt::Rule(rule) = p {
            let mut out = Out::default();
            let wrote = tool_rules::render_prompt(&mut out, rule);
            assert_eq!(wrote, !out.buf.is_empty());
            check::valid_text(&out.buf);
        }
    }
    if !export || rules.iter().any(|r| matches!(r, FRule::Rendered { .. })) {
        return None;
    }
    let list = rules
        .iter()
        .map(|r| {
            let FRule::Rule { kind, tool_name, children, max_count_limit } = r else { unreachable!() };
            let mut fields = vec![("type", Json::Str(kind.tag().into())), ("tool_name", Json::text(tool_name))];
            if kind.has_children() {
                fields.push(("children", Json::List(children.iter().map(Json::text).collect())));
            }
            if *kind == RuleKind::MaxCountPerStep {
                fields.push(("max_count_limit", Json::int(max_count_limit)));
            }
            Json::Obj(fields)
        })
        .collect();
    let expected = match &value {
        None => Json::Null,
        Some(v) => Json::List(vec![Json::hex(tool_rules::DESCRIPTION.as_bytes()), Json::hex(v)]),
    };
    Some(Json::Obj(vec![("rules", Json::List(list)), ("expected", expected)]))
}
