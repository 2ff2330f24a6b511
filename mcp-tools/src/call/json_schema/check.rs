//! Checking a value against compiled [`Node`]s, listing each problem with the JSON pointer
//! of the value at fault, or, quietly, only finding whether there is one (for `anyOf`
//! branches, `not`, `if`, `contains`, and a plain validity check).

use std::fmt::Write as _;

use serde_json::{Map, Number, Value};

use super::Problem;
use super::node::{Bound, Keywords, Node, NodeId};
use super::value;

/// The longest chain of subschemas one check follows, the arguments' nesting included: it
/// bounds the stack a check uses (about 1 KiB a step in a release build, 2 in a debug one,
/// so well inside a 2 MiB thread stack). The arguments nest at most 100 levels, a recursive
/// schema takes two or three steps a level, and `$ref`s cannot cycle in place, so only a
/// pathological schema gets here.
pub(super) const MAX_CHAIN: usize = 400;

/// The most bytes of a value a message shows.
const SHOWN_BYTES: usize = 200;

/// Records a problem at `$at`; a quiet report's first problem ends the check.
macro_rules! fail {
    ($report:expr, $at:expr, $valid:ident, $message:expr) => {{
        $report.add($at, || $message);
        $valid = false;
        if $report.quiet {
            return false;
        }
    }};
}

/// Takes a sub-check's outcome; in a quiet report a failure ends the check.
macro_rules! require {
    ($report:expr, $valid:ident, $outcome:expr) => {{
        if !$outcome {
            $valid = false;
            if $report.quiet {
                return false;
            }
        }
    }};
}

/// A step from a value to one of its members.
#[derive(Clone, Copy)]
pub(super) enum Step<'v> {
    Key(&'v str),
    Index(usize),
}

/// Where a check's problems go.
pub(super) struct Report {
    /// Only validity is asked: nothing is written, and the first problem ends the check.
    quiet: bool,
    /// Problems past this many are counted, not written.
    limit: usize,
    pub(super) listed: Vec<Problem>,
    pub(super) total: usize,
}

impl Report {
    /// A report of validity only.
    pub(super) fn quiet() -> Report {
        Report {
            quiet: true,
            ..Report::listing(0)
        }
    }

    /// A report of every problem, the first `limit` written out.
    pub(super) fn listing(limit: usize) -> Report {
        Report {
            quiet: false,
            limit,
            listed: Vec::new(),
            total: 0,
        }
    }

    fn add(&mut self, at: &[Step<'_>], message: impl FnOnce() -> String) {
        self.total += 1;
        if self.listed.len() < self.limit {
            self.listed.push(Problem {
                pointer: pointer(at),
                message: message(),
            });
        }
    }
}

/// What of a value the subschemas that passed have evaluated, for `unevaluatedProperties`
/// and `unevaluatedItems` (kept only when the schema has either).
#[derive(Default)]
struct Seen<'v> {
    keys: Vec<&'v str>,
    all_keys: bool,
    /// Items before this index.
    items: usize,
    all_items: bool,
    /// Items `contains` matched.
    indices: Vec<usize>,
}

impl<'v> Seen<'v> {
    fn absorb(&mut self, other: Seen<'v>) {
        self.keys.extend(other.keys);
        self.all_keys |= other.all_keys;
        self.items = self.items.max(other.items);
        self.all_items |= other.all_items;
        self.indices.extend(other.indices);
    }
}

/// A check of values against one schema's nodes.
pub(super) struct Checker<'s> {
    pub(super) nodes: &'s [Node],
    /// The schema has `unevaluated…` keywords, so what each subschema evaluated is kept.
    pub(super) track: bool,
}

impl Checker<'_> {
    /// Check `value` against node `id`; problems go to `report`.
    pub(super) fn run(&self, id: NodeId, value: &Value, report: &mut Report) -> bool {
        self.check(id, value, &mut Vec::new(), report, &mut Seen::default(), 0)
    }

    fn check<'v>(
        &self,
        id: NodeId,
        value: &'v Value,
        at: &mut Vec<Step<'v>>,
        report: &mut Report,
        seen: &mut Seen<'v>,
        chain: usize,
    ) -> bool {
        let keywords = match &self.nodes[id] {
            Node::Always(true) => return true,
            Node::Always(false) => {
                report.add(at, || {
                    format!("False schema does not allow {}", shown(value))
                });
                return false;
            }
            Node::Keywords(keywords) => keywords,
        };
        if chain > MAX_CHAIN {
            report.add(at, || {
                format!("the schema nests deeper than {MAX_CHAIN} subschemas here")
            });
            return false;
        }
        let mut here = Seen::default();
        let valid = self.keywords(keywords, value, at, report, &mut here, chain + 1);
        if valid && self.track {
            seen.absorb(here);
        }
        valid
    }

    /// Check a member of the value at `at` (its own evaluation, not the parent's).
    fn member<'v>(
        &self,
        id: NodeId,
        member: &'v Value,
        step: Step<'v>,
        at: &mut Vec<Step<'v>>,
        report: &mut Report,
        chain: usize,
    ) -> bool {
        // A quiet check writes no pointer, so it keeps no path (and allocates none).
        if report.quiet {
            return self.check(id, member, at, report, &mut Seen::default(), chain);
        }
        at.push(step);
        let valid = self.check(id, member, at, report, &mut Seen::default(), chain);
        at.pop();
        valid
    }

    /// Whether `value` passes node `id`, with nothing written; what passed is seen.
    fn passes<'v>(
        &self,
        id: NodeId,
        value: &'v Value,
        at: &mut Vec<Step<'v>>,
        seen: &mut Seen<'v>,
        chain: usize,
    ) -> bool {
        self.check(id, value, at, &mut Report::quiet(), seen, chain)
    }

    fn keywords<'v>(
        &self,
        keywords: &Keywords,
        value: &'v Value,
        at: &mut Vec<Step<'v>>,
        report: &mut Report,
        here: &mut Seen<'v>,
        chain: usize,
    ) -> bool {
        let mut valid = true;
        if let Some(types) = keywords.types.filter(|types| !types.admit(value)) {
            fail!(report, at, valid, {
                let mut message = shown(value);
                let plural = types.names().nth(1).is_some();
                message.push_str(if plural {
                    " is not of types "
                } else {
                    " is not of type "
                });
                for (index, name) in types.names().enumerate() {
                    if index > 0 {
                        message.push_str(", ");
                    }
                    message.push('"');
                    message.push_str(name);
                    message.push('"');
                }
                message
            });
        }
        if let Some(values) = &keywords.one_of_values
            && !values.iter().any(|allowed| value::equal(allowed, value))
        {
            fail!(report, at, valid, {
                format!("{} is not one of {}", shown(value), alternatives(values))
            });
        }
        if let Some(constant) = &keywords.constant
            && !value::equal(constant, value)
        {
            fail!(
                report,
                at,
                valid,
                format!("{} was expected", shown(constant))
            );
        }
        let by_type = match value {
            Value::Number(number) => self.number(keywords, number, at, report),
            Value::String(text) => self.string(keywords, text, at, report),
            Value::Array(items) => self.array(keywords, items, at, report, here, chain),
            Value::Object(map) => self.object(keywords, map, at, report, here, chain),
            Value::Null | Value::Bool(_) => true,
        };
        require!(report, valid, by_type);
        require!(
            report,
            valid,
            self.in_place(keywords, value, at, report, here, chain)
        );
        require!(
            report,
            valid,
            self.unevaluated(keywords, value, at, report, here, chain)
        );
        valid
    }

    fn number(
        &self,
        keywords: &Keywords,
        number: &Number,
        at: &[Step<'_>],
        report: &mut Report,
    ) -> bool {
        let mut valid = true;
        let beyond = |bound: &Bound, outside: std::cmp::Ordering| {
            let order = value::compare(number, &bound.limit);
            order == outside || (bound.exclusive && order.is_eq())
        };
        let or_equal = |bound: &Bound| if bound.exclusive { " or equal to" } else { "" };
        for (bound, outside, relation) in [
            (&keywords.minimum, std::cmp::Ordering::Less, "less than"),
            (
                &keywords.maximum,
                std::cmp::Ordering::Greater,
                "greater than",
            ),
        ] {
            if let Some(bound) = bound.as_ref().filter(|bound| beyond(bound, outside)) {
                let (or_equal, limit) = (or_equal(bound), &bound.limit);
                let name = if outside.is_lt() {
                    "minimum"
                } else {
                    "maximum"
                };
                fail!(report, at, valid, {
                    format!("{number} is {relation}{or_equal} the {name} of {limit}")
                });
            }
        }
        if let Some(divisor) = &keywords.multiple_of
            && !value::is_multiple(number, divisor)
        {
            fail!(
                report,
                at,
                valid,
                format!("{number} is not a multiple of {divisor}")
            );
        }
        valid
    }

    fn string(
        &self,
        keywords: &Keywords,
        text: &str,
        at: &[Step<'_>],
        report: &mut Report,
    ) -> bool {
        let mut valid = true;
        // Only the start of a long text is copied; `shown` cuts it (and says so).
        let shown_text = || {
            let mut cut = text.len().min(SHOWN_BYTES + 8);
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            shown(&Value::String(text[..cut].to_owned()))
        };
        if keywords.min_length.is_some() || keywords.max_length.is_some() {
            let length = text.chars().count() as u64;
            if let Some(minimum) = keywords.min_length.filter(|minimum| length < *minimum) {
                fail!(report, at, valid, {
                    format!(
                        "{} is shorter than {}",
                        shown_text(),
                        counted(minimum, "character")
                    )
                });
            }
            if let Some(maximum) = keywords.max_length.filter(|maximum| length > *maximum) {
                fail!(report, at, valid, {
                    format!(
                        "{} is longer than {}",
                        shown_text(),
                        counted(maximum, "character")
                    )
                });
            }
        }
        if let Some(pattern) = &keywords.pattern
            && !pattern.regex.is_match(text)
        {
            fail!(report, at, valid, {
                format!(
                    "{} does not match {}",
                    shown_text(),
                    quoted(&pattern.source)
                )
            });
        }
        if let Some(format) = &keywords.format
            && !(format.conforms)(text)
        {
            fail!(
                report,
                at,
                valid,
                format!("{} is not a {}", shown_text(), quoted(&format.name))
            );
        }
        valid
    }

    fn array<'v>(
        &self,
        keywords: &Keywords,
        items: &'v [Value],
        at: &mut Vec<Step<'v>>,
        report: &mut Report,
        here: &mut Seen<'v>,
        chain: usize,
    ) -> bool {
        let mut valid = true;
        for (index, (item, &id)) in items.iter().zip(&keywords.prefix_items).enumerate() {
            require!(
                report,
                valid,
                self.member(id, item, Step::Index(index), at, report, chain)
            );
        }
        let prefix = keywords.prefix_items.len().min(items.len());
        here.items = here.items.max(prefix);
        if let Some(rest) = keywords.items {
            let extra = items.iter().enumerate().skip(prefix);
            let extra = extra.map(|(index, item)| (Step::Index(index), item));
            require!(
                report,
                valid,
                self.rest(rest, extra, "Additional items", at, report, chain)
            );
            here.all_items = true;
        }
        if let Some(contains) = keywords.contains {
            let mut matched = 0u64;
            for (index, item) in items.iter().enumerate() {
                if self.passes(contains, item, &mut Vec::new(), &mut Seen::default(), chain) {
                    matched += 1;
                    if self.track {
                        here.indices.push(index);
                    }
                }
            }
            let minimum = keywords.min_contains.unwrap_or(1);
            if matched < minimum {
                fail!(
                    report,
                    at,
                    valid,
                    match keywords.min_contains {
                        None => format!(
                            "None of {} are valid under the given schema",
                            shown_items(items)
                        ),
                        Some(_) => format!(
                            "{} has fewer than {} valid under the 'contains' schema",
                            shown_items(items),
                            counted(minimum, "item")
                        ),
                    }
                );
            }
            if let Some(maximum) = keywords.max_contains.filter(|maximum| matched > *maximum) {
                fail!(
                    report,
                    at,
                    valid,
                    format!(
                        "{} has more than {} valid under the 'contains' schema",
                        shown_items(items),
                        counted(maximum, "item")
                    )
                );
            }
        }
        let length = items.len() as u64;
        if let Some(minimum) = keywords.min_items.filter(|minimum| length < *minimum) {
            fail!(
                report,
                at,
                valid,
                format!(
                    "{} has less than {}",
                    shown_items(items),
                    counted(minimum, "item")
                )
            );
        }
        if let Some(maximum) = keywords.max_items.filter(|maximum| length > *maximum) {
            fail!(
                report,
                at,
                valid,
                format!(
                    "{} has more than {}",
                    shown_items(items),
                    counted(maximum, "item")
                )
            );
        }
        if keywords.unique_items && !all_distinct(items) {
            fail!(
                report,
                at,
                valid,
                format!("{} has non-unique elements", shown_items(items))
            );
        }
        valid
    }

    fn object<'v>(
        &self,
        keywords: &Keywords,
        map: &'v Map<String, Value>,
        at: &mut Vec<Step<'v>>,
        report: &mut Report,
        here: &mut Seen<'v>,
        chain: usize,
    ) -> bool {
        let mut valid = true;
        if keywords.pattern_properties.is_empty() && keywords.additional_properties.is_none() {
            for (name, id) in &keywords.properties {
                if let Some((key, member)) = map.get_key_value(name) {
                    require!(
                        report,
                        valid,
                        self.member(*id, member, Step::Key(key), at, report, chain)
                    );
                    if self.track {
                        here.keys.push(key);
                    }
                }
            }
        } else {
            let mut unmatched = Vec::new();
            // The object's keys and `properties` are both sorted: walked together.
            let mut properties = keywords.properties.iter().peekable();
            for (key, member) in map {
                let mut matched = false;
                while properties.next_if(|(name, _)| name < key).is_some() {}
                if let Some(&(_, id)) = properties.next_if(|(name, _)| name == key) {
                    matched = true;
                    require!(
                        report,
                        valid,
                        self.member(id, member, Step::Key(key), at, report, chain)
                    );
                }
                for (pattern, id) in &keywords.pattern_properties {
                    if pattern.regex.is_match(key) {
                        matched = true;
                        require!(
                            report,
                            valid,
                            self.member(*id, member, Step::Key(key), at, report, chain)
                        );
                    }
                }
                if matched {
                    if self.track {
                        here.keys.push(key);
                    }
                } else if keywords.additional_properties.is_some() {
                    unmatched.push((Step::Key(key), member));
                }
            }
            if let Some(rest) = keywords.additional_properties {
                let unmatched = unmatched.into_iter();
                let outcome =
                    self.rest(rest, unmatched, "Additional properties", at, report, chain);
                require!(report, valid, outcome);
                here.all_keys = true;
            }
        }
        for name in &keywords.required {
            if !map.contains_key(name) {
                fail!(
                    report,
                    at,
                    valid,
                    format!("{} is a required property", quoted(name))
                );
            }
        }
        for (name, needed) in &keywords.dependent_required {
            if map.contains_key(name) {
                for need in needed
                    .iter()
                    .filter(|need| !map.contains_key(need.as_str()))
                {
                    fail!(
                        report,
                        at,
                        valid,
                        format!(
                            "{} is required when {} is present",
                            quoted(need),
                            quoted(name)
                        )
                    );
                }
            }
        }
        if let Some(names) = keywords.property_names {
            for key in map.keys() {
                let name = Value::String(key.clone());
                let first = report.listed.len();
                let passed = self.check(
                    names,
                    &name,
                    &mut Vec::new(),
                    report,
                    &mut Seen::default(),
                    chain,
                );
                // A property name's problems are the object's.
                let object = pointer(at);
                for problem in &mut report.listed[first..] {
                    problem.pointer.clone_from(&object);
                }
                require!(report, valid, passed);
            }
        }
        let count = map.len() as u64;
        if let Some(minimum) = keywords.min_properties.filter(|minimum| count < *minimum) {
            fail!(
                report,
                at,
                valid,
                format!(
                    "{} has less than {}",
                    shown_map(map),
                    counted(minimum, "property")
                )
            );
        }
        if let Some(maximum) = keywords.max_properties.filter(|maximum| count > *maximum) {
            fail!(
                report,
                at,
                valid,
                format!(
                    "{} has more than {}",
                    shown_map(map),
                    counted(maximum, "property")
                )
            );
        }
        valid
    }

    /// The members `rest` gives, against node `id` (`additionalProperties`, `items` after
    /// `prefixItems`, `unevaluated…`). With `false` they are one problem of the container,
    /// naming them (`Additional properties are not allowed ('a', 'b' were unexpected)`);
    /// otherwise each member is checked.
    fn rest<'v>(
        &self,
        id: NodeId,
        rest: impl Iterator<Item = (Step<'v>, &'v Value)>,
        what: &str,
        at: &mut Vec<Step<'v>>,
        report: &mut Report,
        chain: usize,
    ) -> bool {
        let mut valid = true;
        if matches!(self.nodes[id], Node::Always(false)) {
            let mut rest = rest.peekable();
            if rest.peek().is_some() {
                fail!(report, at, valid, {
                    let named: Vec<String> = rest
                        .map(|(step, member)| match step {
                            Step::Key(key) => format!("'{key}'"),
                            Step::Index(_) => shown(member),
                        })
                        .collect();
                    let verb = if named.len() == 1 { "was" } else { "were" };
                    format!(
                        "{what} are not allowed ({} {verb} unexpected)",
                        named.join(", ")
                    )
                });
            }
        } else {
            for (step, member) in rest {
                require!(
                    report,
                    valid,
                    self.member(id, member, step, at, report, chain)
                );
            }
        }
        valid
    }

    /// The subschemas applied to the value itself: `$ref`, `allOf`, `anyOf`, `oneOf`, `not`,
    /// `if`/`then`/`else`, `dependentSchemas`.
    fn in_place<'v>(
        &self,
        keywords: &Keywords,
        value: &'v Value,
        at: &mut Vec<Step<'v>>,
        report: &mut Report,
        here: &mut Seen<'v>,
        chain: usize,
    ) -> bool {
        let mut valid = true;
        for &id in keywords.reference.iter().chain(&keywords.all_of) {
            require!(
                report,
                valid,
                self.check(id, value, at, report, here, chain)
            );
        }
        if !keywords.any_of.is_empty() {
            let mut passed = false;
            for &id in &keywords.any_of {
                let mut branch = Seen::default();
                if self.passes(id, value, at, &mut branch, chain) {
                    passed = true;
                    here.absorb(branch);
                    // Every passing branch's annotations count, so all are tried.
                    if !self.track {
                        break;
                    }
                }
            }
            if !passed {
                let outcome = self.no_branch(&keywords.any_of, "anyOf", value, at, report, chain);
                require!(report, valid, outcome);
            }
        }
        if !keywords.one_of.is_empty() {
            let mut passed = 0;
            let mut chosen = Seen::default();
            for &id in &keywords.one_of {
                let mut branch = Seen::default();
                if self.passes(id, value, at, &mut branch, chain) {
                    passed += 1;
                    chosen = branch;
                    if passed > 1 {
                        break;
                    }
                }
            }
            match passed {
                0 => {
                    let outcome =
                        self.no_branch(&keywords.one_of, "oneOf", value, at, report, chain);
                    require!(report, valid, outcome)
                }
                1 => here.absorb(chosen),
                _ => fail!(
                    report,
                    at,
                    valid,
                    format!(
                        "{} is valid under more than one of the schemas listed in the 'oneOf' keyword",
                        shown(value)
                    )
                ),
            }
        }
        if let Some(not) = keywords.not
            && self.passes(not, value, at, &mut Seen::default(), chain)
        {
            fail!(
                report,
                at,
                valid,
                format!("{} must not be valid under the 'not' schema", shown(value))
            );
        }
        if let Some(condition) = &keywords.condition {
            let mut tested = Seen::default();
            let next = if self.passes(condition.test, value, at, &mut tested, chain) {
                here.absorb(tested);
                condition.then
            } else {
                condition.otherwise
            };
            if let Some(next) = next {
                require!(
                    report,
                    valid,
                    self.check(next, value, at, report, here, chain)
                );
            }
        }
        if let Value::Object(map) = value {
            for (name, id) in &keywords.dependent_schemas {
                if map.contains_key(name) {
                    require!(
                        report,
                        valid,
                        self.check(*id, value, at, report, here, chain)
                    );
                }
            }
        }
        valid
    }

    /// `value` passed none of `branches` (of `anyOf` or `oneOf`): when only one of them is
    /// for the value's JSON type (an `Option` of a struct is `anyOf` an object schema and
    /// `null`), that branch's own problems say what is wrong; otherwise one problem says
    /// that no branch took the value. Always false.
    fn no_branch<'v>(
        &self,
        branches: &[NodeId],
        keyword: &str,
        value: &'v Value,
        at: &mut Vec<Step<'v>>,
        report: &mut Report,
        chain: usize,
    ) -> bool {
        let mut fitting = branches.iter().filter(|id| self.admits_type(**id, value));
        match (fitting.next(), fitting.next()) {
            (Some(&only), None) if !report.quiet => {
                self.check(only, value, at, report, &mut Seen::default(), chain)
            }
            _ => {
                report.add(at, || {
                    format!(
                        "{} is not valid under any of the schemas listed in the '{keyword}' keyword",
                        shown(value)
                    )
                });
                false
            }
        }
    }

    /// Whether node `id` (through its `$ref`s) takes values of `value`'s JSON type.
    fn admits_type(&self, id: NodeId, value: &Value) -> bool {
        let mut id = id;
        // A `$ref` chain ends: `compile` refuses cycles.
        loop {
            match &self.nodes[id] {
                Node::Always(allowed) => return *allowed,
                Node::Keywords(keywords) => match (keywords.types, keywords.reference) {
                    (Some(types), _) => return types.admit(value),
                    (None, Some(target)) => id = target,
                    (None, None) => return true,
                },
            }
        }
    }

    /// `unevaluatedProperties` and `unevaluatedItems`: the members nothing else evaluated.
    fn unevaluated<'v>(
        &self,
        keywords: &Keywords,
        value: &'v Value,
        at: &mut Vec<Step<'v>>,
        report: &mut Report,
        here: &mut Seen<'v>,
        chain: usize,
    ) -> bool {
        let mut valid = true;
        match (
            value,
            keywords.unevaluated_properties,
            keywords.unevaluated_items,
        ) {
            (Value::Object(map), Some(id), _) if !here.all_keys => {
                here.keys.sort_unstable();
                let seen = &here.keys;
                let rest = map
                    .iter()
                    .filter(|(key, _)| seen.binary_search(&key.as_str()).is_err())
                    .map(|(key, member)| (Step::Key(key), member));
                let outcome = self.rest(id, rest, "Unevaluated properties", at, report, chain);
                require!(report, valid, outcome);
                here.all_keys = true;
            }
            (Value::Array(items), _, Some(id)) if !here.all_items => {
                here.indices.sort_unstable();
                let seen = &here.indices;
                let rest = items
                    .iter()
                    .enumerate()
                    .skip(here.items)
                    .filter(|(index, _)| seen.binary_search(index).is_err())
                    .map(|(index, item)| (Step::Index(index), item));
                let outcome = self.rest(id, rest, "Unevaluated items", at, report, chain);
                require!(report, valid, outcome);
                here.all_items = true;
            }
            _ => {}
        }
        valid
    }
}

/// Whether no two items are equal; by their canonical texts, so a long array is not
/// compared pairwise.
fn all_distinct(items: &[Value]) -> bool {
    if items.len() <= 16 {
        return items.iter().enumerate().all(|(index, item)| {
            items[index + 1..]
                .iter()
                .all(|other| !value::equal(item, other))
        });
    }
    let mut texts = std::collections::HashSet::with_capacity(items.len());
    items.iter().all(|item| {
        let mut text = String::new();
        value::canonical(item, &mut text);
        texts.insert(text)
    })
}

/// The JSON pointer of the value `at` points to.
fn pointer(at: &[Step<'_>]) -> String {
    let mut pointer = String::new();
    for step in at {
        pointer.push('/');
        match step {
            Step::Key(key) if key.contains(['~', '/']) => {
                pointer.push_str(&key.replace('~', "~0").replace('/', "~1"))
            }
            Step::Key(key) => pointer.push_str(key),
            Step::Index(index) => pointer.push_str(itoa::Buffer::new().format(*index)),
        }
    }
    pointer
}

/// `value` as JSON, cut after [`SHOWN_BYTES`] bytes (a message stays short whatever came).
fn shown(value: &Value) -> String {
    /// Stops the serializer once the text is long enough.
    struct Capped(String);
    impl std::io::Write for Capped {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            if self.0.len() >= SHOWN_BYTES {
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            // serde_json writes whole UTF-8 sequences per call.
            self.0.push_str(&String::from_utf8_lossy(bytes));
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut capped = Capped(String::new());
    let complete = serde_json::to_writer(&mut capped, value).is_ok();
    let mut text = capped.0;
    if !complete || text.len() > SHOWN_BYTES {
        let mut cut = SHOWN_BYTES.min(text.len());
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push('…');
    }
    text
}

fn shown_items(items: &[Value]) -> String {
    shown(&Value::Array(
        items.iter().take(SHOWN_BYTES / 2).cloned().collect(),
    ))
}

fn shown_map(map: &Map<String, Value>) -> String {
    shown(&Value::Object(
        map.iter()
            .take(SHOWN_BYTES / 4)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    ))
}

/// A text as a JSON string.
fn quoted(text: &str) -> String {
    Value::String(text.to_owned()).to_string()
}

/// `"a"`, `"a" or "b"`, `"a", "b" or "c"`.
fn alternatives(values: &[Value]) -> String {
    let mut text = String::new();
    for (index, value) in values.iter().enumerate() {
        if index > 0 {
            text.push_str(if index + 1 == values.len() {
                " or "
            } else {
                ", "
            });
        }
        text.push_str(&shown(value));
        if text.len() > SHOWN_BYTES * 2 {
            let _ = write!(text, " … ({} in all)", values.len());
            break;
        }
    }
    text
}

/// `1 item`, `3 items`.
fn counted(count: u64, noun: &str) -> String {
    match (count, noun) {
        (1, _) => format!("1 {noun}"),
        (_, "property") => format!("{count} properties"),
        _ => format!("{count} {noun}s"),
    }
}
