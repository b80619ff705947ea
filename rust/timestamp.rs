//! The timestamp of `<memory_metadata>`: Python `datetime` arithmetic, pytz's
//! conversion from UTC, and CPython 3.11's `strftime(FORMAT)` on glibc.
//!
//! A datetime is its seven fields; arithmetic goes through a count of
//! microseconds since 0001-01-01 00:00, which is exact over Python's whole
//! range (years 1 to 9999) and orders like Python's naive comparison. A zone
//! pytz built is read into a `PytzZone`, `Zone::from_pytz` decides whether Rust
//! renders it, and zones are kept by name in a `ZoneCache`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::error::{RenderError, RenderResult};
use crate::out::Sink;

/// The format Letta passes to `strftime`.
pub const FORMAT: &str = "%Y-%m-%d %I:%M:%S %p %Z%z";

/// The message of Python's `OverflowError` when arithmetic leaves years 1..=9999.
pub const OUT_OF_RANGE: &str = "date value out of range";

const MICROS_PER_SECOND: i64 = 1_000_000;
const MICROS_PER_DAY: i64 = 86_400 * MICROS_PER_SECOND;
/// Days from 0001-01-01 to 10000-01-01: the end of Python's range.
const DAYS_IN_RANGE: i64 = 3_652_059;

/// A naive `datetime`: fields as Python holds them. The derived order is Python's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct DateTime {
    pub year: i32,
    pub month: u8,
    pub day: u8,
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    pub microsecond: u32,
}

/// Days since 1970-01-01 of a proleptic Gregorian date (any year, no range check).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    // Count years from March so that the leap day is the last day of a year.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date of a day counted from 1970-01-01: the inverse of `days_from_civil`.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 { month_from_march + 3 } else { month_from_march - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// 0001-01-01 counted from 1970-01-01.
const DAY_ONE: i64 = -719_162;

impl DateTime {
    /// Microseconds since 0001-01-01 00:00:00.
    pub fn to_micros(&self) -> i64 {
        let days = days_from_civil(self.year.into(), self.month.into(), self.day.into()) - DAY_ONE;
        let seconds = i64::from(self.hour) * 3600 + i64::from(self.minute) * 60 + i64::from(self.second);
        days * MICROS_PER_DAY + seconds * MICROS_PER_SECOND + i64::from(self.microsecond)
    }

    /// The datetime `micros` after 0001-01-01 00:00:00; `None` outside years 1..=9999.
    pub fn from_micros(micros: i64) -> Option<DateTime> {
        if !(0..DAYS_IN_RANGE * MICROS_PER_DAY).contains(&micros) {
            return None;
        }
        let (year, month, day) = civil_from_days(micros / MICROS_PER_DAY + DAY_ONE);
        let in_day = micros % MICROS_PER_DAY;
        let seconds = in_day / MICROS_PER_SECOND;
        // Every narrowing below is in range: the values are bounded by the arithmetic above.
        Some(DateTime {
            year: year as i32,
            month: month as u8,
            day: day as u8,
            hour: (seconds / 3600) as u8,
            minute: (seconds / 60 % 60) as u8,
            second: (seconds % 60) as u8,
            microsecond: (in_day % MICROS_PER_SECOND) as u32,
        })
    }

    /// Python's `dt + timedelta(microseconds=delta)`, with its `OverflowError`.
    pub fn plus(&self, delta: i64) -> RenderResult<DateTime> {
        self.to_micros()
            .checked_add(delta)
            .and_then(DateTime::from_micros)
            .ok_or_else(|| RenderError::Overflow(OUT_OF_RANGE.into()))
    }
}

/// A `timedelta` as microseconds, or `None` when it is beyond any datetime arithmetic.
pub fn delta_micros(days: i64, seconds: i64, microseconds: i64) -> Option<i64> {
    days.checked_mul(MICROS_PER_DAY)?.checked_add(seconds.checked_mul(MICROS_PER_SECOND)?)?.checked_add(microseconds)
}

/// What `%Z` and `%z` print for an aware datetime: `tzname()` and `utcoffset()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Local {
    pub name: Box<[u8]>,
    /// The UTC offset in microseconds.
    pub offset: i64,
}

impl Local {
    pub fn new(name: &[u8], offset: i64) -> Local {
        Local { name: name.into(), offset }
    }
}

/// A `utcoffset` and `tzname` as pytz keeps them, read from Python: a `timedelta` as its
/// (days, seconds, microseconds) and a `str`; `None` where the object is of another type.
#[derive(Debug, Clone, Default)]
pub struct PytzLocal {
    pub offset: Option<(i64, i64, i64)>,
    pub name: Option<String>,
}

impl PytzLocal {
    /// The offset and name, when `strftime` prints the name unchanged (printable ASCII).
    fn local(&self) -> Option<Local> {
        let name = self.name.as_deref().filter(|n| n.bytes().all(|b| (0x20..0x7f).contains(&b)))?;
        let (days, seconds, microseconds) = self.offset?;
        Some(Local::new(name.as_bytes(), delta_micros(days, seconds, microseconds)?))
    }
}

/// The object `pytz.timezone(name)` returned, read into plain values (`None` where a value
/// is not of the type pytz uses).
#[derive(Debug, Clone)]
pub enum PytzZone {
    /// `pytz.utc` itself.
    Utc,
    /// A `StaticTzInfo`: its `_utcoffset` and `_tzname`.
    Static(PytzLocal),
    /// A `DstTzInfo`: `_utc_transition_times` (naive datetimes), `_transition_info` (its
    /// `(utcoffset, dst, tzname)` triples), and its own `_utcoffset` and `_tzname`.
    Dst { utc_times: Vec<Option<DateTime>>, infos: Vec<Option<PytzLocal>>, base: PytzLocal },
    /// Any other `tzinfo`.
    Other,
}

/// A pytz timezone, as tables read once from the object `pytz.timezone` returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Zone {
    /// `pytz.utc`.
    Utc,
    /// A `StaticTzInfo`: one offset, one name.
    Fixed(Local),
    /// A `DstTzInfo`.
    Transitions {
        /// `_utc_transition_times`, as microseconds; the same length as `infos`.
        utc_times: Box<[i64]>,
        /// `_transition_info`: offset and name (the DST part plays no role in the output).
        infos: Box<[Local]>,
        /// The zone object's own `_utcoffset` and `_tzname` (its first transition).
        base: Local,
    },
}

impl Zone {
    /// The zone Rust renders as pytz does; `None` when Python must do the work (a zone of a
    /// kind pytz does not build, a value of an unexpected type, a name `strftime` may change).
    pub fn from_pytz(zone: &PytzZone) -> Option<Zone> {
        match zone {
            PytzZone::Utc => Some(Zone::Utc),
            PytzZone::Static(base) => base.local().map(Zone::Fixed),
            PytzZone::Dst { utc_times, infos, base } => {
                let utc_times: Option<Vec<i64>> = utc_times.iter().map(|t| t.map(|t| t.to_micros())).collect();
                let infos: Option<Vec<Local>> = infos.iter().map(|info| info.as_ref()?.local()).collect();
                Zone::transitions(utc_times?, infos?, base.local()?)
            }
            PytzZone::Other => None,
        }
    }

    /// A `DstTzInfo`'s tables; `None` unless both are non-empty and of the same length.
    pub fn transitions(utc_times: Vec<i64>, infos: Vec<Local>, base: Local) -> Option<Zone> {
        if infos.is_empty() || utc_times.len() != infos.len() {
            return None;
        }
        Some(Zone::Transitions { utc_times: utc_times.into(), infos: infos.into(), base })
    }

    /// `%Z` and `%z` of a datetime whose `tzinfo` is the zone object itself
    /// (`astimezone` then returns it unchanged).
    pub fn base(&self) -> (&[u8], i64) {
        match self {
            Zone::Utc => (b"UTC", 0),
            Zone::Fixed(local) | Zone::Transitions { base: local, .. } => (&local.name, local.offset),
        }
    }

    /// pytz's `fromutc`: the local time of a UTC instant, its name and its offset.
    pub fn from_utc(&self, utc: &DateTime) -> RenderResult<(DateTime, &[u8], i64)> {
        let local = match self {
            Zone::Utc => return Ok((*utc, b"UTC", 0)),
            Zone::Fixed(local) => local,
            Zone::Transitions { utc_times, infos, base } => {
                let index = bisect_right(utc_times, utc.to_micros()).saturating_sub(1);
                // `transitions` makes `infos` as long as `utc_times`: `base` is never used here.
                infos.get(index).unwrap_or(base)
            }
        };
        Ok((utc.plus(local.offset)?, &local.name, local.offset))
    }
}

/// Python's `bisect.bisect_right`, step for step (so even an unsorted table gives its index).
fn bisect_right(a: &[i64], x: i64) -> usize {
    let (mut lo, mut hi) = (0, a.len());
    while lo < hi {
        let mid = (lo + hi) / 2;
        if x < a[mid] {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// `n` in decimal with at least two digits, as C's `%02d`.
fn two_digits(out: &mut impl Sink, n: i64) {
    if (0..10).contains(&n) {
        out.push(b"0");
    }
    out.int(n);
}

/// `%z`: `+HHMM`, `+HHMMSS` when there are seconds, `+HHMMSS.ffffff` when there are microseconds.
pub fn write_offset(out: &mut impl Sink, offset: i64) {
    let sign: &[u8] = if offset < 0 { b"-" } else { b"+" };
    let abs = offset.unsigned_abs();
    let micros = (abs % 1_000_000) as i64;
    let seconds = (abs / 1_000_000) as i64;
    out.push(sign);
    two_digits(out, seconds / 3600);
    two_digits(out, seconds / 60 % 60);
    if micros != 0 || seconds % 60 != 0 {
        two_digits(out, seconds % 60);
    }
    if micros != 0 {
        out.push(b".");
        let mut digits = [b'0'; 6];
        let mut m = micros;
        for d in digits.iter_mut().rev() {
            *d = b'0' + (m % 10) as u8;
            m /= 10;
        }
        out.push(&digits);
    }
}

/// `dt.strftime(FORMAT)`: `tzname` and `offset` are what `%Z` and `%z` print
/// (`None` for a naive datetime, or when `tzname()` / `utcoffset()` return `None`).
pub fn write(out: &mut impl Sink, dt: &DateTime, tzname: Option<&[u8]>, offset: Option<i64>) {
    // glibc's %Y does not pad: year 5 is "5".
    out.int(dt.year.into());
    out.push(b"-");
    two_digits(out, dt.month.into());
    out.push(b"-");
    two_digits(out, dt.day.into());
    out.push(b" ");
    let hour12 = match dt.hour % 12 {
        0 => 12,
        h => h,
    };
    two_digits(out, hour12.into());
    out.push(b":");
    two_digits(out, dt.minute.into());
    out.push(b":");
    two_digits(out, dt.second.into());
    out.push(if dt.hour < 12 { b" AM " } else { b" PM " });
    if let Some(name) = tzname {
        out.push(name);
    }
    if let Some(offset) = offset {
        write_offset(out, offset);
    }
}

/// Who formats `format_datetime(dt, timezone)`, and from what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Formatting {
    /// Rust, from the datetime's own fields, with no zone name or offset.
    Naive,
    /// Python: `dt.strftime(FORMAT)`.
    Python,
    /// Python: `dt.astimezone(zone).strftime(FORMAT)`.
    PythonInZone,
    /// Rust, with the zone's base name and offset: `astimezone` would return `dt` itself.
    ZoneBase,
    /// Rust, converting the UTC instant through the zone's transitions.
    FromUtc,
}

impl Formatting {
    /// When no zone is asked for: only an exact, naive `datetime` is Rust's (a subclass's
    /// `strftime` or an aware datetime's `tzinfo` decides in Python).
    pub fn without_zone(exact_datetime: bool, naive: bool) -> Self {
        if exact_datetime && naive {
            Formatting::Naive
        } else {
            Formatting::Python
        }
    }

    /// When a zone is asked for by name: Rust renders an exact `datetime` in a zone it modelled
    /// (`Zone::from_pytz`) and asked for by an exact `str` (a subclass may hash or compare
    /// otherwise in pytz's own cache).
    pub fn in_zone(exact_name: bool, modelled: bool, exact_datetime: bool, tzinfo_is_zone: bool) -> Self {
        match (exact_name && modelled && exact_datetime, tzinfo_is_zone) {
            (false, _) => Formatting::PythonInZone,
            (true, true) => Formatting::ZoneBase,
            (true, false) => Formatting::FromUtc,
        }
    }
}

/// Zones by the exact name asked for, as the zone library gave them. Only names it
/// accepted are kept, and at most `limit` of them (case variants of valid names are
/// unbounded). The lock is held only to look up and to store, never while a zone is made.
pub struct ZoneCache<T> {
    zones: Mutex<HashMap<Box<[u8]>, Arc<T>>>,
    limit: usize,
}

impl<T> ZoneCache<T> {
    pub fn new(limit: usize) -> Self {
        ZoneCache { zones: Mutex::default(), limit }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Box<[u8]>, Arc<T>>> {
        self.zones.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn get(&self, name: &[u8]) -> Option<Arc<T>> {
        self.lock().get(name).cloned()
    }

    /// The zone to use for `name`: one another thread kept meanwhile, else `zone`, kept
    /// unless the cache is full.
    pub fn keep(&self, name: &[u8], zone: Arc<T>) -> Arc<T> {
        let mut zones = self.lock();
        if let Some(existing) = zones.get(name) {
            return existing.clone();
        }
        if zones.len() < self.limit {
            zones.insert(name.into(), zone.clone());
        }
        zone
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_formats_only_exact_datetimes_in_zones_it_modelled() {
        use Formatting::*;
        assert_eq!(Formatting::without_zone(true, true), Naive);
        for (exact, naive) in [(true, false), (false, true), (false, false)] {
            assert_eq!(Formatting::without_zone(exact, naive), Python);
        }
        assert_eq!(Formatting::in_zone(true, true, true, true), ZoneBase);
        assert_eq!(Formatting::in_zone(true, true, true, false), FromUtc);
        for (name, modelled, exact) in [(false, true, true), (true, false, true), (true, true, false)] {
            for tzinfo_is_zone in [true, false] {
                assert_eq!(Formatting::in_zone(name, modelled, exact, tzinfo_is_zone), PythonInZone);
            }
        }
    }

    #[test]
    fn zone_cache_keeps_the_first_zone_and_at_most_its_limit() {
        let cache = ZoneCache::new(2);
        assert!(cache.get(b"UTC").is_none());
        assert_eq!(*cache.keep(b"UTC", Arc::new(1)), 1);
        assert_eq!(*cache.keep(b"UTC", Arc::new(2)), 1, "the zone kept first stays");
        assert_eq!(*cache.keep(b"EST", Arc::new(3)), 3);
        assert_eq!(*cache.keep(b"utc", Arc::new(4)), 4, "full: used, not kept");
        assert!(cache.get(b"utc").is_none());
        assert_eq!(cache.get(b"UTC").as_deref(), Some(&1));
    }
    use crate::out::Out;

    fn dt(year: i32, month: u8, day: u8, hour: u8, minute: u8, second: u8, microsecond: u32) -> DateTime {
        DateTime { year, month, day, hour, minute, second, microsecond }
    }

    fn show(d: &DateTime, tzname: Option<&[u8]>, offset: Option<i64>) -> String {
        let mut out = Out::default();
        write(&mut out, d, tzname, offset);
        String::from_utf8(out.buf).unwrap()
    }

    const H: i64 = 3600 * MICROS_PER_SECOND;

    #[test]
    fn naive_leaves_a_trailing_space_and_year_is_not_padded() {
        assert_eq!(show(&dt(5, 1, 1, 0, 0, 0, 0), None, None), "5-01-01 12:00:00 AM ");
        assert_eq!(show(&dt(2024, 12, 31, 23, 59, 59, 999_999), None, None), "2024-12-31 11:59:59 PM ");
        assert_eq!(show(&dt(999, 7, 4, 12, 5, 6, 0), None, None), "999-07-04 12:05:06 PM ");
        assert_eq!(show(&dt(2024, 1, 1, 11, 0, 0, 0), None, None), "2024-01-01 11:00:00 AM ");
    }

    #[test]
    fn offsets_like_python() {
        let d = dt(2020, 1, 1, 0, 0, 0, 0);
        assert_eq!(show(&d, Some(b"UTC"), Some(0)), "2020-01-01 12:00:00 AM UTC+0000");
        assert_eq!(show(&d, Some(b"LMT"), Some(-(4 * H + 56 * 60_000_000))), "2020-01-01 12:00:00 AM LMT-0456");
        assert_eq!(show(&d, None, Some(-30 * 60_000_000)), "2020-01-01 12:00:00 AM -0030");
        assert_eq!(show(&d, Some(b"X"), Some(5 * H + 30 * 60_000_000 + 7_000_000)), "2020-01-01 12:00:00 AM X+053007");
        // timezone(-timedelta(hours=3, seconds=1, microseconds=5))
        assert_eq!(show(&d, Some(b""), Some(-(3 * H + 1_000_005))), "2020-01-01 12:00:00 AM -030001.000005");
        assert_eq!(show(&d, Some(b""), Some(1)), "2020-01-01 12:00:00 AM +000000.000001");
        assert_eq!(show(&d, Some(b"N"), None), "2020-01-01 12:00:00 AM N");
    }

    #[test]
    fn micros_round_trip_over_the_whole_range() {
        let first = dt(1, 1, 1, 0, 0, 0, 0);
        let last = dt(9999, 12, 31, 23, 59, 59, 999_999);
        assert_eq!(first.to_micros(), 0);
        assert_eq!(last.to_micros(), DAYS_IN_RANGE * MICROS_PER_DAY - 1);
        for d in [first, last, dt(1600, 2, 29, 1, 2, 3, 4), dt(1900, 3, 1, 0, 0, 0, 0), dt(2000, 2, 29, 23, 0, 0, 0)] {
            assert_eq!(DateTime::from_micros(d.to_micros()), Some(d));
        }
        assert_eq!(DateTime::from_micros(-1), None);
        assert_eq!(DateTime::from_micros(last.to_micros() + 1), None);
        // 1970-01-01 is day 719162 after 0001-01-01 (Python's toordinal() - 1).
        assert_eq!(dt(1970, 1, 1, 0, 0, 0, 0).to_micros(), 719_162 * MICROS_PER_DAY);
    }

    #[test]
    fn plus_overflows_like_python() {
        let last = dt(9999, 12, 31, 23, 0, 0, 0);
        assert_eq!(last.plus(H - 1), Ok(dt(9999, 12, 31, 23, 59, 59, 999_999)));
        assert_eq!(last.plus(H), Err(RenderError::Overflow(OUT_OF_RANGE.into())));
        assert_eq!(dt(1, 1, 1, 0, 0, 0, 0).plus(-1), Err(RenderError::Overflow(OUT_OF_RANGE.into())));
        assert_eq!(dt(2024, 2, 28, 23, 0, 0, 0).plus(H), Ok(dt(2024, 2, 29, 0, 0, 0, 0)));
        assert_eq!(last.plus(i64::MAX), Err(RenderError::Overflow(OUT_OF_RANGE.into())));
        assert_eq!(delta_micros(999_999_999, 0, 0), None);
        assert_eq!(delta_micros(-1, 86_399, 999_999), Some(-1));
        assert_eq!(delta_micros(i64::MAX, 0, 0), None);
    }

    #[test]
    fn transitions_bisect_right() {
        let t = |d: DateTime| d.to_micros();
        let zone = Zone::transitions(
            vec![t(dt(1, 1, 1, 0, 0, 0, 0)), t(dt(2000, 1, 1, 0, 0, 0, 0))],
            vec![Local::new(b"LMT", -5 * H), Local::new(b"EST", -4 * H)],
            Local::new(b"LMT", -5 * H),
        )
        .unwrap();
        assert_eq!(Zone::transitions(vec![0], vec![], Local::new(b"", 0)), None);
        let (local, name, offset) = zone.from_utc(&dt(2000, 1, 1, 0, 0, 0, 0)).unwrap();
        assert_eq!((local, name, offset), (dt(1999, 12, 31, 20, 0, 0, 0), &b"EST"[..], -4 * H));
        let (local, name, _) = zone.from_utc(&dt(1999, 12, 31, 23, 59, 59, 999_999)).unwrap();
        assert_eq!((local, name), (dt(1999, 12, 31, 18, 59, 59, 999_999), &b"LMT"[..]));
        assert!(zone.from_utc(&dt(1, 1, 1, 4, 0, 0, 0)).is_err());
        assert_eq!(zone.base(), (&b"LMT"[..], -5 * H));
        assert_eq!(Zone::Utc.from_utc(&dt(1, 1, 1, 0, 0, 0, 0)).unwrap().1, b"UTC");
        let fixed = Zone::Fixed(Local::new(b"+14", 14 * H));
        assert!(fixed.from_utc(&dt(9999, 12, 31, 10, 0, 0, 0)).is_err());
        assert_eq!(fixed.from_utc(&dt(9999, 12, 31, 9, 0, 0, 0)).unwrap().0, dt(9999, 12, 31, 23, 0, 0, 0));
    }

    #[test]
    fn bisect_matches_python_on_ties() {
        assert_eq!(bisect_right(&[], 5), 0);
        assert_eq!(bisect_right(&[1, 5, 5, 9], 5), 3);
        assert_eq!(bisect_right(&[1, 5, 9], 0), 0);
        assert_eq!(bisect_right(&[1, 5, 9], 10), 3);
    }

    #[test]
    fn a_zone_from_pytz_when_every_value_is_of_pytz_s_type() {
        let pytz_local =
            |name: &str, hours: i64| PytzLocal { offset: Some((0, hours * 3600, 0)), name: Some(name.into()) };
        // pytz keeps a negative offset as days=-1 and positive seconds.
        let est = PytzLocal { offset: Some((-1, 86_400 - 5 * 3600, 0)), name: Some("EST".into()) };
        let new_york = PytzZone::Dst {
            utc_times: vec![Some(dt(1, 1, 1, 0, 0, 0, 0)), Some(dt(2000, 1, 1, 0, 0, 0, 0))],
            infos: vec![Some(pytz_local("LMT", -5)), Some(est.clone())],
            base: pytz_local("LMT", -5),
        };
        let expected = Zone::transitions(
            vec![dt(1, 1, 1, 0, 0, 0, 0).to_micros(), dt(2000, 1, 1, 0, 0, 0, 0).to_micros()],
            vec![Local::new(b"LMT", -5 * H), Local::new(b"EST", -5 * H)],
            Local::new(b"LMT", -5 * H),
        );
        assert_eq!(Zone::from_pytz(&new_york), expected);
        assert_eq!(Zone::from_pytz(&PytzZone::Utc), Some(Zone::Utc));
        assert_eq!(Zone::from_pytz(&PytzZone::Static(est)), Some(Zone::Fixed(Local::new(b"EST", -5 * H))));
        assert_eq!(Zone::from_pytz(&PytzZone::Other), None);
    }

    #[test]
    fn python_renders_a_zone_with_any_value_rust_does_not_model() {
        let good = || PytzLocal { offset: Some((0, 3600, 0)), name: Some("CET".into()) };
        let dst = |utc_times, infos, base| PytzZone::Dst { utc_times, infos, base };
        let one_time = || vec![Some(dt(1970, 1, 1, 0, 0, 0, 0))];
        let not_modelled = [
            dst(vec![None], vec![Some(good())], good()),
            dst(one_time(), vec![None], good()),
            dst(one_time(), vec![Some(good())], PytzLocal { name: None, ..good() }),
            dst(one_time(), vec![Some(PytzLocal { offset: None, ..good() })], good()),
            dst(one_time(), vec![Some(good()), Some(good())], good()),
            dst(Vec::new(), Vec::new(), good()),
            PytzZone::Static(PytzLocal { name: Some("\u{e9}t\u{e9}".into()), ..good() }),
            PytzZone::Static(PytzLocal { name: Some("tab\t".into()), ..good() }),
            PytzZone::Static(PytzLocal { offset: Some((i64::MAX, 0, 0)), ..good() }),
        ];
        for zone in not_modelled {
            assert_eq!(Zone::from_pytz(&zone), None, "{zone:?}");
        }
        let printable = PytzLocal { name: Some(" ~+05:30".into()), ..good() };
        assert_eq!(Zone::from_pytz(&PytzZone::Static(printable)), Some(Zone::Fixed(Local::new(b" ~+05:30", H))));
    }
}
