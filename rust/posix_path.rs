//! Python's `posixpath` on text held as surrogatepass UTF-8 (see `text`).
//!
//! Only `/` is special, and it is a single byte that never occurs inside a
//! multi-byte sequence, so every function here works on bytes and gives the
//! bytes of the string Python returns.
//!
//! `relpath` needs care: Python makes both paths absolute with `abspath`, which
//! prefixes a relative path with the process's current directory. Whether the
//! answer depends on that directory is decided exactly here (see `relpath`),
//! so a caller never has to guess.

/// The one separator.
const SEP: u8 = b'/';

/// Why `relpath` gave no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelpathError {
    /// Python raises `ValueError("no path specified")` for an empty path.
    NoPath,
    /// The answer depends on the current directory, which was not given.
    NeedsCwd,
}

/// Python's `ValueError` message for `relpath("")`.
pub const NO_PATH_MESSAGE: &str = "no path specified";

/// `posixpath.isabs`: the path starts with `/`.
pub fn isabs(p: &[u8]) -> bool {
    p.first() == Some(&SEP)
}

/// Index just past the last `/`, or 0 when there is none.
fn after_last_sep(p: &[u8]) -> usize {
    p.iter().rposition(|&b| b == SEP).map_or(0, |i| i + 1)
}

/// `posixpath.basename`: everything after the last `/` (`""` for `a/`).
pub fn basename(p: &[u8]) -> &[u8] {
    &p[after_last_sep(p)..]
}

/// `posixpath.dirname`: everything before the last `/`, with trailing slashes
/// removed unless the head is nothing but slashes (`//a` gives `//`).
pub fn dirname(p: &[u8]) -> &[u8] {
    let head = &p[..after_last_sep(p)];
    match head.iter().rposition(|&b| b != SEP) {
        Some(last) => &head[..last + 1],
        // Empty, or only slashes: kept as it is.
        None => head,
    }
}

/// The components `split("/")` gives, without the empty ones and `.`.
fn meaningful_parts(p: &[u8]) -> impl Iterator<Item = &[u8]> {
    p.split(|&b| b == SEP).filter(|c| !c.is_empty() && *c != b".")
}

/// Writes `parts` joined by `/` after `lead`; `.` when both are empty.
fn joined(lead: &[u8], parts: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::with_capacity(lead.len() + parts.iter().map(|p| p.len() + 1).sum::<usize>());
    out.extend_from_slice(lead);
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            out.push(SEP);
        }
        out.extend_from_slice(part);
    }
    if out.is_empty() {
        out.push(b'.');
    }
    out
}

/// `posixpath.normpath`: collapses `//`, `.` and `dir/..` without touching the
/// file system. Exactly two leading slashes are kept (POSIX leaves their
/// meaning to the implementation); one, or three or more, become one. `..`
/// above `/` is dropped; leading `..` of a relative path is kept.
pub fn normpath(p: &[u8]) -> Vec<u8> {
    if p.is_empty() {
        return b".".to_vec();
    }
    let lead: &[u8] = if p.starts_with(b"//") && !p.starts_with(b"///") {
        b"//"
    } else if isabs(p) {
        b"/"
    } else {
        b""
    };
    let mut parts: Vec<&[u8]> = Vec::new();
    for part in meaningful_parts(p) {
        if part != b".." {
            parts.push(part);
        } else if parts.last().is_some_and(|last| *last != b"..") {
            parts.pop();
        } else if lead.is_empty() {
            // Nothing left to cancel in a relative path: the `..` stays.
            parts.push(part);
        }
        // Otherwise `..` at the root of an absolute path: `/..` is `/`.
    }
    joined(lead, &parts)
}

/// `posixpath.join(a, b)` for two parts: an absolute `b` replaces `a`.
pub fn join(a: &[u8], b: &[u8]) -> Vec<u8> {
    if isabs(b) {
        return b.to_vec();
    }
    let mut out = Vec::with_capacity(a.len() + 1 + b.len());
    out.extend_from_slice(a);
    if !a.is_empty() && !a.ends_with(b"/") {
        out.push(SEP);
    }
    out.extend_from_slice(b);
    out
}

/// `posixpath.abspath` with the current directory given (as `os.getcwd()` returns it).
pub fn abspath_in(p: &[u8], cwd: &[u8]) -> Vec<u8> {
    if isabs(p) {
        normpath(p)
    } else {
        normpath(&join(cwd, p))
    }
}

/// A path resolved as `abspath` would resolve it, but relative to an unknown
/// current directory: its own remaining parts, and how many `..` reached
/// past them into the current directory.
struct Resolved<'a> {
    absolute: bool,
    parts: Vec<&'a [u8]>,
    /// `..` that found nothing of the path's own to cancel. For an absolute
    /// path they stop at `/` and are simply dropped.
    escapes: usize,
}

fn resolve(p: &[u8]) -> Resolved<'_> {
    let mut parts: Vec<&[u8]> = Vec::new();
    let mut escapes = 0;
    for part in meaningful_parts(p) {
        if part != b".." {
            parts.push(part);
        } else if parts.pop().is_none() {
            escapes += 1;
        }
    }
    Resolved { absolute: isabs(p), parts, escapes }
}

/// The relative path from `start` to `path`, both already absolute and split
/// into their non-empty parts: `..` for each part of `start` past the common
/// prefix, then the rest of `path`; `.` when they are the same.
fn relative(start: &[&[u8]], path: &[&[u8]]) -> Vec<u8> {
    let common = start.iter().zip(path).take_while(|(s, p)| s == p).count();
    let ups = start.len() - common;
    let mut rel: Vec<&[u8]> = Vec::with_capacity(ups + path.len() - common);
    rel.resize(ups, b"..");
    rel.extend_from_slice(&path[common..]);
    joined(b"", &rel)
}

/// `posixpath.relpath(path, start)` without the current directory.
///
/// Python computes `abspath` of both. With `C` the current directory's parts,
/// a relative path `p` resolves to `C` minus the `k` parts its unmatched `..`
/// cancel (all of `C` when `k` is larger), followed by `p`'s own remaining
/// parts. So:
/// - two absolute paths never involve the current directory;
/// - two relative paths with the same `k` share the same prefix taken from
///   `C`, which cancels out: the answer depends only on their own parts;
/// - two relative paths with different `k` (or one absolute and one relative)
///   give an answer that changes with `C` (its depth, or its names appear in
///   it): `NeedsCwd`, and `relpath_in` answers with a given directory.
pub fn relpath(path: &[u8], start: &[u8]) -> Result<Vec<u8>, RelpathError> {
    if path.is_empty() {
        return Err(RelpathError::NoPath);
    }
    let (to, from) = (resolve(path), resolve(start));
    let independent = match (to.absolute, from.absolute) {
        (true, true) => true,
        (false, false) => to.escapes == from.escapes,
        _ => false,
    };
    if independent {
        Ok(relative(&from.parts, &to.parts))
    } else {
        Err(RelpathError::NeedsCwd)
    }
}

/// `posixpath.relpath(path, start)` with `cwd` standing for `os.getcwd()`.
pub fn relpath_in(path: &[u8], start: &[u8], cwd: &[u8]) -> Result<Vec<u8>, RelpathError> {
    if path.is_empty() {
        return Err(RelpathError::NoPath);
    }
    let (to, from) = (abspath_in(path, cwd), abspath_in(start, cwd));
    let to_parts: Vec<&[u8]> = to.split(|&b| b == SEP).filter(|c| !c.is_empty()).collect();
    let from_parts: Vec<&[u8]> = from.split(|&b| b == SEP).filter(|c| !c.is_empty()).collect();
    Ok(relative(&from_parts, &to_parts))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(b: &[u8]) -> &str {
        std::str::from_utf8(b).unwrap()
    }

    /// (path, dirname, basename, normpath), each as Python 3.11's posixpath gives it.
    const CASES: &[(&str, &str, &str, &str)] = &[
        ("", "", "", "."),
        ("/", "/", "", "/"),
        ("//", "//", "", "//"),
        ("///", "///", "", "/"),
        ("///a", "///", "a", "/a"),
        ("a/../b", "a/..", "b", "b"),
        ("../..", "..", "..", "../.."),
        ("a/", "a", "", "a"),
        ("a//", "a", "", "a"),
        ("/a/", "/a", "", "/a"),
        ("//a//b/", "//a//b", "", "//a/b"),
        ("a", "", "a", "a"),
        (".", "", ".", "."),
        ("..", "", "..", ".."),
        ("./a", ".", "a", "a"),
        ("a/./b/", "a/./b", "", "a/b"),
        ("/../a", "/..", "a", "/a"),
        ("//../a", "//..", "a", "//a"),
        ("///..//a/.", "///..//a", ".", "/a"),
        ("a/b/../../..", "a/b/../..", "..", ".."),
        ("../a/..", "../a", "..", ".."),
        ("a\0/../b", "a\0/..", "b", "b"),
        ("\u{e9}//x/..", "\u{e9}//x", "..", "\u{e9}"),
    ];

    #[test]
    fn dirname_basename_normpath_match_python() {
        for &(p, dir, base, norm) in CASES {
            assert_eq!(s(dirname(p.as_bytes())), dir, "dirname({p:?})");
            assert_eq!(s(basename(p.as_bytes())), base, "basename({p:?})");
            assert_eq!(s(&normpath(p.as_bytes())), norm, "normpath({p:?})");
        }
    }

    #[test]
    fn lone_surrogates_pass_through() {
        // "\ud800/x/.." as surrogatepass bytes: normpath gives "\ud800".
        let p = b"\xED\xA0\x80/x/..";
        assert_eq!(normpath(p), b"\xED\xA0\x80");
        assert_eq!(dirname(p), b"\xED\xA0\x80/x");
    }

    #[test]
    fn join_and_abspath() {
        assert_eq!(join(b"/", b"a"), b"/a");
        assert_eq!(join(b"/x", b"a"), b"/x/a");
        assert_eq!(join(b"/x", b"/a"), b"/a");
        assert_eq!(join(b"/x", b""), b"/x/");
        assert_eq!(abspath_in(b"", b"/x/y"), b"/x/y");
        assert_eq!(abspath_in(b"../../..", b"/x/y"), b"/");
        assert_eq!(abspath_in(b"//a/../b", b"/x"), b"//b");
    }

    /// (path, start, relpath) where Python's answer is the same for every cwd.
    const REL_CASES: &[(&str, &str, &str)] = &[
        ("/a/b/SKILL.md", "/a", "b/SKILL.md"),
        ("//a//b/SKILL.md", "//a", "b/SKILL.md"),
        ("/SKILL.md", "/", "SKILL.md"),
        ("/../SKILL.md", "/", "SKILL.md"),
        ("/r/x/../SKILL.md", "/r/x", "../SKILL.md"),
        ("/SKILL.md/../SKILL.md", "/SKILL.md", "."),
        ("a/b/SKILL.md", "a", "b/SKILL.md"),
        ("a/SKILL.md", "", "a/SKILL.md"),
        ("${MEMORY_DIR}/skills/../SKILL.md", "${MEMORY_DIR}/skills", "../SKILL.md"),
        ("${MEMORY_DIR}/skills/./SKILL.md", "${MEMORY_DIR}/skills", "SKILL.md"),
        ("../x/SKILL.md", "..", "x/SKILL.md"),
        ("a", "a", "."),
        ("a/b", "c/d", "../../a/b"),
        ("../../a", "../../b/c", "../../a"),
    ];

    #[test]
    fn relpath_without_cwd() {
        for &(path, start, rel) in REL_CASES {
            assert_eq!(
                relpath(path.as_bytes(), start.as_bytes()).map(|r| String::from_utf8(r).unwrap()),
                Ok(rel.into())
            );
            for cwd in ["/", "/x", "/x/y/z", "/SKILL.md/x"] {
                let exact = relpath_in(path.as_bytes(), start.as_bytes(), cwd.as_bytes()).unwrap();
                assert_eq!(s(&exact), rel, "relpath({path:?}, {start:?}) in {cwd}");
            }
        }
        assert_eq!(relpath(b"", b"/"), Err(RelpathError::NoPath));
        assert_eq!(relpath_in(b"", b"/", b"/"), Err(RelpathError::NoPath));
    }

    #[test]
    fn relpath_that_depends_on_cwd() {
        // One `..` escapes past "../..": seen from "/", "/tmp", ".../a/SKILL.md/b"
        // Python answers "SKILL.md", "../SKILL.md" and ".".
        let (path, start) = (&b"../../SKILL.md"[..], &b".."[..]);
        assert_eq!(relpath(path, start), Err(RelpathError::NeedsCwd));
        assert_eq!(relpath_in(path, start, b"/").unwrap(), b"SKILL.md");
        assert_eq!(relpath_in(path, start, b"/tmp").unwrap(), b"SKILL.md");
        assert_eq!(relpath_in(path, start, b"/tmp/a").unwrap(), b"../SKILL.md");
        assert_eq!(relpath_in(path, start, b"/tmp/a/SKILL.md/b").unwrap(), b".");
        // Mixed absolute and relative.
        assert_eq!(relpath(b"/a", b"a"), Err(RelpathError::NeedsCwd));
        assert_eq!(relpath_in(b"/a", b"a", b"/").unwrap(), b".");
        assert_eq!(relpath_in(b"/a", b"a", b"/b").unwrap(), b"../../a");
    }

    #[test]
    fn deep_paths_are_linear() {
        let deep = "a/".repeat(100_000) + &"../".repeat(100_001) + "SKILL.md";
        assert_eq!(normpath(deep.as_bytes()), b"../SKILL.md");
        assert_eq!(dirname(deep.as_bytes()).len(), deep.len() - "/SKILL.md".len());
        assert_eq!(relpath(deep.as_bytes(), b".."), Ok(b"SKILL.md".to_vec()));
    }
}
