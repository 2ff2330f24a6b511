//! The `format` keyword, asserted: the formats JSON Schema 2020-12 defines (its section
//! 7.3), each checked by the grammar of the RFC it cites. A format not named here (such as
//! the numeric ones schemars writes, `uint8` or `double`) is an annotation: any string
//! passes.

use std::net::Ipv6Addr;

/// The check of `format`: whether a text conforms to it; `None` when `format` is not one
/// this module checks (JSON Schema then treats it as an annotation: any string passes).
pub(super) fn checker(format: &str) -> Option<fn(&str) -> bool> {
    Some(match format {
        "date-time" => date_time,
        "date" => date,
        "time" => time,
        "duration" => duration,
        "email" => |text| email(text, Script::Ascii),
        "idn-email" => |text| email(text, Script::International),
        "hostname" => |text| hostname(text, Script::Ascii),
        "idn-hostname" => |text| hostname(text, Script::International),
        "ipv4" => ipv4,
        "ipv6" => ipv6,
        "uri" => |text| uri(text, Script::Ascii),
        "uri-reference" => |text| uri_reference(text, Script::Ascii),
        "iri" => |text| uri(text, Script::International),
        "iri-reference" => |text| uri_reference(text, Script::International),
        "uri-template" => uri_template,
        "uuid" => uuid,
        "json-pointer" => json_pointer,
        "relative-json-pointer" => relative_json_pointer,
        "regex" => |text| regex_lite::Regex::new(text).is_ok(),
        _ => return None,
    })
}

/// Whether a format takes characters beyond ASCII (the `idn-`/`iri` variants).
#[derive(Clone, Copy, PartialEq)]
enum Script {
    Ascii,
    International,
}

/// `count` ASCII digits at the start of `text`, as a number, and the rest.
fn digits(text: &str, count: usize) -> Option<(u32, &str)> {
    let head = text.get(..count)?;
    if !head.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    Some((head.parse().ok()?, &text[count..]))
}

/// RFC 3339 full-date: `YYYY-MM-DD`, the day within its month.
fn date(text: &str) -> bool {
    let parsed = || {
        let (year, rest) = digits(text, 4)?;
        let (month, rest) = digits(rest.strip_prefix('-')?, 2)?;
        let (day, rest) = digits(rest.strip_prefix('-')?, 2)?;
        Some(rest.is_empty() && (1..=days_in_month(year, month)).contains(&day))
    };
    parsed().unwrap_or(false)
}

fn days_in_month(year: u32, month: u32) -> u32 {
    let leap = year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400));
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => 0,
    }
}

/// RFC 3339 full-time: `hh:mm:ss[.frac]` and an offset (`Z` or `±hh:mm`). A leap second
/// (`:60`) only where it can be: at 23:59 UTC.
fn time(text: &str) -> bool {
    let parsed = || {
        let (hour, rest) = digits(text, 2)?;
        let (minute, rest) = digits(rest.strip_prefix(':')?, 2)?;
        let (second, mut rest) = digits(rest.strip_prefix(':')?, 2)?;
        if let Some(fraction) = rest.strip_prefix('.') {
            let length = fraction.bytes().take_while(u8::is_ascii_digit).count();
            if length == 0 {
                return None;
            }
            rest = &fraction[length..];
        }
        let offset_minutes = match rest.as_bytes().first()? {
            b'Z' | b'z' if rest.len() == 1 => 0,
            sign @ (b'+' | b'-') => {
                let (hours, tail) = digits(&rest[1..], 2)?;
                let (minutes, tail) = digits(tail.strip_prefix(':')?, 2)?;
                if !tail.is_empty() || hours > 23 || minutes > 59 {
                    return None;
                }
                let offset = (hours * 60 + minutes) as i32;
                if *sign == b'-' { -offset } else { offset }
            }
            _ => return None,
        };
        if hour > 23 || minute > 59 || second > 60 {
            return Some(false);
        }
        let utc = ((hour * 60 + minute) as i32 - offset_minutes).rem_euclid(24 * 60);
        Some(second < 60 || utc == 23 * 60 + 59)
    };
    parsed().unwrap_or(false)
}

/// RFC 3339 date-time: full-date `T` full-time (`T` in either case).
fn date_time(text: &str) -> bool {
    match (text.get(..10), text.get(10..11), text.get(11..)) {
        (Some(day), Some("T" | "t"), Some(clock)) => date(day) && time(clock),
        _ => false,
    }
}

/// RFC 3339 appendix A duration: `P`, then weeks alone, or a run of consecutive date
/// units (years, months, days: `P1Y2M`, `P2M3D`, not `P1Y3D`), then optionally `T` and a
/// run of consecutive time units (hours, minutes, seconds); at least one element, and at
/// least one after a `T`.
fn duration(text: &str) -> bool {
    let Some(rest) = text.strip_prefix('P') else {
        return false;
    };
    if let Some(weeks) = rest.strip_suffix('W') {
        return !weeks.is_empty() && weeks.bytes().all(|byte| byte.is_ascii_digit());
    }
    let (date_part, time_part) = match rest.split_once('T') {
        Some((date_part, time_part)) => (date_part, Some(time_part)),
        None => (rest, None),
    };
    let date_elements = elements(date_part, b"YMD");
    let time_elements = time_part.map(|time_part| elements(time_part, b"HMS"));
    match (date_elements, time_elements) {
        (Some(dates), None) => dates > 0,
        (Some(_), Some(Some(times))) => times > 0,
        _ => false,
    }
}

/// How many `digits unit` elements `text` is, their units a run of consecutive ones from
/// `units`; `None` when it is anything else.
fn elements(mut text: &str, units: &[u8]) -> Option<usize> {
    let mut next_unit: Option<usize> = None;
    let mut count = 0;
    while !text.is_empty() {
        let length = text.bytes().take_while(u8::is_ascii_digit).count();
        let unit = *text.as_bytes().get(length)?;
        let position = units.iter().position(|known| *known == unit)?;
        if length == 0 || next_unit.is_some_and(|next| next != position) {
            return None;
        }
        next_unit = Some(position + 1);
        count += 1;
        text = &text[length + 1..];
    }
    Some(count)
}

/// RFC 5321 Mailbox: a dot-atom or quoted local part, `@`, and a hostname or an address
/// literal (`[192.0.2.1]`, `[IPv6:2001:db8::1]`). `idn-email` (RFC 6531) also takes
/// characters beyond ASCII.
fn email(text: &str, script: Script) -> bool {
    let Some((local, domain)) = text.rsplit_once('@') else {
        return false;
    };
    // RFC 5321 section 4.5.3.1.1.
    if local.len() > 64 {
        return false;
    }
    let local_ok = match local
        .strip_prefix('"')
        .and_then(|inner| inner.strip_suffix('"'))
    {
        Some(quoted) => quoted_content(quoted, script),
        None => dot_atom(local, script),
    };
    let domain_ok = match domain
        .strip_prefix('[')
        .and_then(|inner| inner.strip_suffix(']'))
    {
        Some(literal) => match literal.strip_prefix("IPv6:") {
            Some(address) => ipv6(address),
            None => ipv4(literal),
        },
        None => hostname(domain, script),
    };
    local_ok && domain_ok
}

/// RFC 5322 dot-atom: atoms of atext joined by single dots.
fn dot_atom(text: &str, script: Script) -> bool {
    // RFC 6531 adds every character beyond ASCII.
    let atext = |c: char| {
        c.is_ascii_alphanumeric()
            || "!#$%&'*+-/=?^_`{|}~".contains(c)
            || (script == Script::International && !c.is_ascii())
    };
    !text.is_empty()
        && text
            .split('.')
            .all(|atom| !atom.is_empty() && atom.chars().all(atext))
}

/// The inside of a quoted-string: printable ASCII (and beyond it, internationally) but `"`
/// and `\`, which need a backslash before them.
fn quoted_content(text: &str, script: Script) -> bool {
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        let printable = (' '..='~').contains(&c)
            || (script == Script::International && !c.is_ascii() && !c.is_control());
        match c {
            '\\' => {
                if !chars
                    .next()
                    .is_some_and(|escaped| (' '..='~').contains(&escaped))
                {
                    return false;
                }
            }
            '"' => return false,
            _ if printable => {}
            _ => return false,
        }
    }
    true
}

/// RFC 1123 host name: dot-separated labels of 1–63 letters, digits and hyphens, not
/// starting or ending with a hyphen, 253 characters in all. `idn-hostname` (RFC 5890)
/// also takes any character beyond ASCII but spaces and controls, and the ideographic full
/// stops as dots; the IDNA tables and `xn--` decoding are not applied.
fn hostname(text: &str, script: Script) -> bool {
    let label_char = |c: char| {
        c.is_ascii_alphanumeric()
            || c == '-'
            || (script == Script::International
                && !c.is_ascii()
                && !c.is_whitespace()
                && !c.is_control())
    };
    let dots: &[char] = match script {
        Script::Ascii => &['.'],
        Script::International => &['.', '\u{3002}', '\u{ff0e}', '\u{ff61}'],
    };
    let label = |label: &str| {
        let length = label.chars().count();
        (1..=63).contains(&length)
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label.chars().all(label_char)
    };
    !text.is_empty() && text.chars().count() <= 253 && text.split(dots).all(label)
}

/// Dotted-quad IPv4: four decimal numbers 0–255 without leading zeros.
fn ipv4(text: &str) -> bool {
    let octet = |part: &str| {
        !part.is_empty()
            && part.len() <= 3
            && part.bytes().all(|byte| byte.is_ascii_digit())
            && (part == "0" || !part.starts_with('0'))
            && part.parse::<u16>().is_ok_and(|value| value <= 255)
    };
    let parts: Vec<&str> = text.split('.').collect();
    parts.len() == 4 && parts.into_iter().all(octet)
}

/// RFC 4291 IPv6 text (compressed `::`, an IPv4 tail), without a zone.
fn ipv6(text: &str) -> bool {
    text.parse::<Ipv6Addr>().is_ok()
}

/// RFC 3986 URI (RFC 3987 IRI internationally): a scheme, `:`, and the rest.
fn uri(text: &str, script: Script) -> bool {
    match text.split_once(':') {
        Some((scheme, rest)) => valid_scheme(scheme) && hierarchical(rest, script),
        None => false,
    }
}

/// RFC 3986 URI-reference: a URI, or a relative reference (whose first path segment has no
/// `:`, or it would read as a scheme).
fn uri_reference(text: &str, script: Script) -> bool {
    if uri(text, script) {
        return true;
    }
    let path_end = text.find(['/', '?', '#']).unwrap_or(text.len());
    !text[..path_end].contains(':') && hierarchical(text, script)
}

fn valid_scheme(scheme: &str) -> bool {
    let mut chars = scheme.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
}

/// What follows a URI's scheme (or a relative reference): `//authority` and a path, then
/// `?query` and `#fragment`, each made of the characters RFC 3986 allows there.
fn hierarchical(text: &str, script: Script) -> bool {
    let (text, fragment) = match text.split_once('#') {
        Some((text, fragment)) => (text, Some(fragment)),
        None => (text, None),
    };
    let (text, query) = match text.split_once('?') {
        Some((text, query)) => (text, Some(query)),
        None => (text, None),
    };
    let path = match text.strip_prefix("//") {
        Some(rest) => {
            let end = rest.find('/').unwrap_or(rest.len());
            if !authority(&rest[..end], script) {
                return false;
            }
            &rest[end..]
        }
        None => text,
    };
    let tail_ok = |part: Option<&str>| part.is_none_or(|part| uri_chars(part, "/?:@", script));
    uri_chars(path, "/:@", script) && tail_ok(query) && tail_ok(fragment)
}

/// RFC 3986 authority: `[userinfo@]host[:port]`, the host a name or a bracketed address.
fn authority(text: &str, script: Script) -> bool {
    let (userinfo, host_port) = match text.rsplit_once('@') {
        Some((userinfo, host_port)) => (Some(userinfo), host_port),
        None => (None, text),
    };
    if userinfo.is_some_and(|userinfo| !uri_chars(userinfo, ":", script)) {
        return false;
    }
    let (host, port) = match host_port.strip_prefix('[') {
        Some(bracketed) => match bracketed.split_once(']') {
            Some((address, rest)) if ipv6(address) || future_address(address) => match rest {
                "" => return true,
                _ => ("", rest.strip_prefix(':')),
            },
            _ => return false,
        },
        None => match host_port.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (host_port, None),
        },
    };
    let port_ok = port.is_none_or(|port| port.bytes().all(|byte| byte.is_ascii_digit()));
    port.is_some() == host_port.contains(':') && port_ok && uri_chars(host, "", script)
}

/// RFC 3986 IPvFuture: `v`, hex digits, `.`, then unreserved, sub-delims or `:`.
fn future_address(text: &str) -> bool {
    let Some(rest) = text.strip_prefix(['v', 'V']) else {
        return false;
    };
    match rest.split_once('.') {
        Some((version, tail)) => {
            !version.is_empty()
                && version.bytes().all(|byte| byte.is_ascii_hexdigit())
                && !tail.is_empty()
                && uri_chars(tail, ":", Script::Ascii)
        }
        None => false,
    }
}

/// Every character unreserved, a sub-delimiter, one of `extra`, or a `%` escape of two
/// hex digits (internationally, also any non-ASCII character that is not a control).
fn uri_chars(text: &str, extra: &str, script: Script) -> bool {
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        let allowed = c.is_ascii_alphanumeric()
            || matches!(
                c,
                '-' | '.'
                    | '_'
                    | '~'
                    | '!'
                    | '$'
                    | '&'
                    | '\''
                    | '('
                    | ')'
                    | '*'
                    | '+'
                    | ','
                    | ';'
                    | '='
            )
            || (c.is_ascii() && extra.as_bytes().contains(&(c as u8)))
            || (script == Script::International && !c.is_ascii() && !c.is_control());
        if c == '%' {
            let hex = |c: Option<char>| c.is_some_and(|c| c.is_ascii_hexdigit());
            if !(hex(chars.next()) && hex(chars.next())) {
                return false;
            }
        } else if !allowed {
            return false;
        }
    }
    true
}

/// RFC 6570 URI template: literals and `{…}` expressions of an optional operator and
/// comma-separated variables, each with an optional `:length` (1–9999) or `*`.
fn uri_template(text: &str) -> bool {
    let mut rest = text;
    while let Some(start) = rest.find(['{', '}']) {
        if rest.as_bytes()[start] == b'}' || !template_literals(&rest[..start]) {
            return false;
        }
        let Some(end) = rest[start..].find('}') else {
            return false;
        };
        if !expression(&rest[start + 1..start + end]) {
            return false;
        }
        rest = &rest[start + end + 1..];
    }
    template_literals(rest)
}

fn template_literals(text: &str) -> bool {
    // RFC 6570's grammar leaves out `'`; the JSON Schema test suite takes it, as here.
    let forbidden = |c: char| c.is_control() || " \"<>\\^`{|}".contains(c);
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '%' {
            let hex = |c: Option<char>| c.is_some_and(|c| c.is_ascii_hexdigit());
            if !(hex(chars.next()) && hex(chars.next())) {
                return false;
            }
        } else if forbidden(c) {
            return false;
        }
    }
    true
}

fn expression(text: &str) -> bool {
    let variables = text
        .strip_prefix(|c| "+#./;?&=,!@|".contains(c))
        .unwrap_or(text);
    variables.split(',').all(|variable| {
        let (name, modifier) = match variable.split_once(':') {
            Some((name, length)) => (name, Some(length)),
            None => match variable.strip_suffix('*') {
                Some(name) => (name, None),
                None => (variable, None),
            },
        };
        let length_ok = modifier.is_none_or(|length| {
            !length.starts_with('0')
                && (1..=4).contains(&length.len())
                && length.bytes().all(|byte| byte.is_ascii_digit())
        });
        length_ok && variable_name(name)
    })
}

/// RFC 6570 varname: letters, digits, `_` and `%` escapes, with single dots between.
fn variable_name(name: &str) -> bool {
    !name.is_empty()
        && name.split('.').all(|part| {
            !part.is_empty() && {
                let mut chars = part.chars();
                let mut ok = true;
                while let Some(c) = chars.next() {
                    ok &= match c {
                        '%' => {
                            let hex = |c: Option<char>| c.is_some_and(|c| c.is_ascii_hexdigit());
                            hex(chars.next()) && hex(chars.next())
                        }
                        _ => c.is_ascii_alphanumeric() || c == '_',
                    };
                }
                ok
            }
        })
}

/// RFC 4122 UUID: 8-4-4-4-12 hex digits.
fn uuid(text: &str) -> bool {
    text.len() == 36
        && text.bytes().enumerate().all(|(index, byte)| match index {
            8 | 13 | 18 | 23 => byte == b'-',
            _ => byte.is_ascii_hexdigit(),
        })
}

/// RFC 6901 JSON pointer: empty, or `/`-prefixed tokens where `~` is followed by 0 or 1.
fn json_pointer(text: &str) -> bool {
    (text.is_empty() || text.starts_with('/'))
        && text
            .split('~')
            .skip(1)
            .all(|after| after.starts_with(['0', '1']))
}

/// Relative JSON pointer (draft-handrews-relative-json-pointer-01, which JSON Schema
/// 2020-12 cites): a non-negative integer without leading zeros, then `#` or a JSON pointer.
fn relative_json_pointer(text: &str) -> bool {
    let length = text.bytes().take_while(u8::is_ascii_digit).count();
    let rest = &text[length..];
    length > 0 && (length == 1 || !text.starts_with('0')) && (rest == "#" || json_pointer(rest))
}

#[cfg(test)]
mod tests {
    use super::checker;

    fn conforms(format: &str, text: &str) -> Option<bool> {
        checker(format).map(|check| check(text))
    }

    fn check(format: &str, valid: &[&str], invalid: &[&str]) {
        for text in valid {
            assert_eq!(
                conforms(format, text),
                Some(true),
                "{format}: {text:?} is valid"
            );
        }
        for text in invalid {
            assert_eq!(
                conforms(format, text),
                Some(false),
                "{format}: {text:?} is invalid"
            );
        }
    }

    #[test]
    fn dates_and_times() {
        check(
            "date",
            &["2024-02-29", "2000-02-29", "1999-12-31", "2023-04-30"],
            &[
                "2023-02-29",
                "1900-02-29",
                "2023-04-31",
                "2023-13-01",
                "2023-00-10",
                "2023-1-01",
                "20230101",
                "2023-01-01T",
                "２０２３-01-01",
                "",
            ],
        );
        check(
            "time",
            &[
                "23:59:59Z",
                "08:30:06.283185Z",
                "23:59:60Z",
                "15:59:60-08:00",
                "12:00:00+01:30",
                "12:00:00z",
            ],
            &[
                "24:00:00Z",
                "12:60:00Z",
                "12:00:61Z",
                "22:59:60Z",
                "23:59:60+01:00",
                "12:00:00",
                "12:00:00+24:00",
                "12:00:00.Z",
                "1:00:00Z",
                "12:00:00+0100",
            ],
        );
        check(
            "date-time",
            &[
                "1963-06-19T08:30:06.283185Z",
                "1963-06-19t08:30:06z",
                "1998-12-31T23:59:60Z",
                "1990-12-31T15:59:60-08:00",
            ],
            &[
                "1998-12-31T23:59:61Z",
                "1963-06-19 08:30:06Z",
                "1963-06-19T08:30:06",
                "2023-02-29T00:00:00Z",
                "1963-06-1９T08:30:06Z",
                "06/19/1963 08:30:06 PST",
            ],
        );
        check(
            "duration",
            &[
                "P4DT12H30M5S",
                "P4Y",
                "PT0S",
                "P0D",
                "P1M",
                "PT1M",
                "PT36H",
                "P1DT12H",
                "P2W",
                "P1Y2M3D",
                "PT1M2S",
            ],
            &[
                "", "P", "PT", "P1YT", "P1", "P2D1Y", "P1D2H", "P2S", "P1Y2W", "PT1D", "4DT12H",
                "P1Y1Y", "P১Y", "P1Y2D", "PT1H2S",
            ],
        );
    }

    #[test]
    fn mail_and_host_names() {
        check(
            "email",
            &[
                "joe.bloggs@example.com",
                "\"joe bloggs\"@example.com",
                "te~st@example.com",
                "joe@[127.0.0.1]",
                "joe@[IPv6:::1]",
                "a@b",
            ],
            &[
                "2962",
                ".test@example.com",
                "test.@example.com",
                "te..st@example.com",
                "joe@[127.0.0.300]",
                "joe@-example.com",
                "jöe@example.com",
                "@example.com",
                "joe@",
            ],
        );
        check(
            "idn-email",
            &[
                "실례@실례.테스트",
                "jöe@example.com",
                "user@cafe\u{301}.com",
                "\u{85}@example.com",
            ],
            &["2962", "a@-b", &format!("{}@example.com", "a".repeat(65))],
        );
        check(
            "hostname",
            &[
                "www.example.com",
                "xn--4gbwdl.xn--wgbh1c",
                "a",
                "1host",
                &"a".repeat(63),
            ],
            &[
                "",
                ".",
                "-a-host-name",
                "not_a_valid_host_name",
                "host-",
                "a..b",
                &"a".repeat(64),
                "héllo.com",
            ],
        );
        check(
            "idn-hostname",
            &["실례.테스트", "héllo.com", "실례\u{3002}테스트"],
            &["-héllo", "a b", "a\u{3000}b"],
        );
    }

    #[test]
    fn addresses() {
        check(
            "ipv4",
            &["192.168.0.1", "0.0.0.0", "255.255.255.255"],
            &[
                "127.0.0.0.1",
                "256.256.256.256",
                "087.10.0.1",
                "1.2.3",
                "1.2.3.a",
                "১২৭.0.0.1",
                "",
            ],
        );
        check(
            "ipv6",
            &[
                "::1",
                "::",
                "1:2:3:4:5:6:7:8",
                "::ffff:192.168.0.1",
                "1::8",
                "FE80::1",
            ],
            &[
                "12345::",
                "1::2::3",
                "::laptop",
                "fe80::1%eth0",
                "1:2:3:4:5:6:7:8:9",
                ":1",
                "",
            ],
        );
        check(
            "uuid",
            &[
                "2EB8AA08-AA98-11EA-B4AA-73B441D16380",
                "2eb8aa08-aa98-11ea-b4aa-73b441d16380",
                "00000000-0000-0000-0000-000000000000",
            ],
            &[
                "2eb8aa08-aa98-11ea-b4aa-73b441d1638",
                "2eb8aa08aa9811eab4aa73b441d16380",
                "2eb8aa08-aa98-11ea-b4aa-73b441d1638g",
                "{2eb8aa08-aa98-11ea-b4aa-73b441d16380}",
            ],
        );
    }

    #[test]
    fn uris_iris_and_templates() {
        check(
            "uri",
            &[
                "http://foo.bar/?baz=qux#quux",
                "http://foo.com/blah_(wiki)#cite-1",
                "http://[2001:db8::7]/c=GB?objectClass?one",
                "mailto:John.Doe@example.com",
                "urn:oasis:names:specification:docbook:dtd:xml:4.1.2",
                "tel:+1-816-555-1212",
                "http://user:pw@host:8080/p%20q",
                "ldap://[v7.fe80::1]/",
            ],
            &[
                "//foo.bar/?baz=qux#quux",
                "/abc",
                "abc",
                "http:// shouldfail.com",
                ":// should fail",
                "bar,baz:foo",
                "\\\\WINDOWS\\fileshare",
                "https://[@example.org/test.txt",
                "http://example.com:80a",
                "http://ex.com/%zz",
                "http://ex.com/a#b#c",
                "http://ex.com/ü",
            ],
        );
        check(
            "uri-reference",
            &[
                "http://foo.bar/?baz=qux#quux",
                "//foo.bar/?baz=qux#quux",
                "/abc",
                "abc",
                "#frag",
                "",
                "../x?y",
            ],
            &["\\\\WINDOWS\\fileshare", "#frag\\ment", "a:b:c d", "1:2"],
        );
        check(
            "iri",
            &["http://ƒøø.ßår/?∂éœ=πîx#πîüx"],
            &["/abc", "http://a b"],
        );
        check(
            "iri-reference",
            &["//ƒøø.ßår/?∂éœ=πîx#πîüx", "âππ"],
            &["\\\\WINDOWS\\filëßåré"],
        );
        check(
            "uri-template",
            &[
                "http://example.com/dictionary/{term:1}/{term}",
                "/{+path}{?q,lang*}",
                "plain",
                "a'b",
                "{var.name}",
                "{%20x}",
            ],
            &[
                "http://example.com/dictionary/{term:1}/{term",
                "{}",
                "{a,}",
                "{term:0}",
                "{term:10000}",
                "a}b",
                "{a b}",
                "{{x}}",
            ],
        );
    }

    #[test]
    fn pointers_and_patterns() {
        check(
            "json-pointer",
            &["", "/", "/foo/bar~0/baz~1/%a", "/foo//bar", "/~0~1"],
            &["/foo/bar~", "/~2", "#", "#/", "a/b"],
        );
        check(
            "relative-json-pointer",
            &["1", "0/foo/bar", "2/0/baz/1/zip", "0#", "120/foo/bar"],
            &[
                "/foo/bar",
                "-1/foo/bar",
                "+1/foo/bar",
                "0##",
                "01/a",
                "01#",
                "",
                "1-1/x",
                "0+2#",
            ],
        );
        check(
            "regex",
            &["([abc])+\\s+$", "^[a-z]{2,}$"],
            &["^(abc]", "a{2,1}", "(?<=a)b"],
        );
    }

    #[test]
    fn other_formats_are_annotations() {
        for format in ["int32", "uint8", "double", "color", ""] {
            assert_eq!(conforms(format, "anything"), None, "{format}");
        }
    }
}
