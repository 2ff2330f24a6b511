//! Reading a schema document into [`Node`]s: every keyword's value is checked for the shape
//! the JSON Schema meta-schema gives it, `$ref`s are resolved (within the document), and a
//! schema that could only loop (a `$ref` cycle that never moves into the arguments) is
//! refused. Keywords that only annotate, and unknown ones, are skipped, as the
//! specification says.

use std::collections::HashMap;

use serde_json::{Map, Number, Value};

use crate::definition::uri_template::percent_decode;

use super::format;
use super::node::{Bound, Condition, Format, Keywords, Node, NodeId, Pattern, Types};

/// The nodes of `root`, the root's first.
pub(super) fn compile(root: &Value) -> Result<Vec<Node>, String> {
    let mut compiler = Compiler {
        root,
        base: root.get("$id").and_then(Value::as_str).unwrap_or_default(),
        nodes: Vec::new(),
        pointers: Vec::new(),
        by_pointer: HashMap::new(),
        anchors: None,
        pending: Vec::new(),
    };
    compiler.node(root, String::new());
    // Subschemas are compiled from a list, not by recursion: no schema, however deep its
    // nesting or its chains of `$ref`s, can exhaust the stack.
    while let Some((schema, id)) = compiler.pending.pop() {
        let pointer = compiler.pointers[id].clone();
        compiler.nodes[id] = match schema {
            Value::Bool(allowed) => Node::Always(*allowed),
            Value::Object(map) => Node::Keywords(Box::new(compiler.keywords(map, &pointer)?)),
            other => {
                return Err(located(
                    &pointer,
                    &format!("a schema must be an object or a boolean, not {other}"),
                ));
            }
        };
    }
    if let Some(looping) = first_cycle(&compiler.nodes) {
        return Err(located(
            &compiler.pointers[looping],
            "the schema applies itself to the same value again ($ref cycle); \
             it could never finish",
        ));
    }
    Ok(compiler.nodes)
}

struct Compiler<'s> {
    root: &'s Value,
    /// The root's `$id`: a `$ref` may start with it.
    base: &'s str,
    nodes: Vec<Node>,
    /// Where each node's schema is, as a JSON pointer into the document.
    pointers: Vec<String>,
    /// Every subschema compiled so far, by its pointer, so a `$ref` to it shares its node.
    by_pointer: HashMap<String, NodeId>,
    /// `$anchor` (and `$dynamicAnchor`) names and their pointers, collected at the first
    /// `$ref` to an anchor.
    anchors: Option<HashMap<String, String>>,
    /// Subschemas given a node whose keywords are not compiled yet.
    pending: Vec<(&'s Value, NodeId)>,
}

/// `message`, saying where in the schema the problem is.
fn located(pointer: &str, message: &str) -> String {
    if pointer.is_empty() {
        format!("{message} (at the schema's root)")
    } else {
        format!("{message} (at {pointer})")
    }
}

impl<'s> Compiler<'s> {
    /// The node of the subschema at `pointer`: the one it already has, or a new one whose
    /// keywords `compile` reads later.
    fn node(&mut self, schema: &'s Value, pointer: String) -> NodeId {
        if let Some(&id) = self.by_pointer.get(&pointer) {
            return id;
        }
        let id = self.nodes.len();
        self.nodes.push(Node::Always(true));
        self.pointers.push(pointer.clone());
        self.by_pointer.insert(pointer, id);
        self.pending.push((schema, id));
        id
    }

    fn keywords(&mut self, map: &'s Map<String, Value>, at: &str) -> Result<Keywords, String> {
        let mut keywords = Keywords::default();
        let (mut minimum, mut maximum) = (None, None);
        let (mut exclusive_minimum, mut exclusive_maximum) = (None, None);
        for (key, value) in map {
            // Where this keyword is: written only when needed.
            let here = || format!("{at}/{}", escape(key));
            let wrong = |shape: &str| {
                Err::<Keywords, _>(located(
                    &here(),
                    &format!("\"{key}\" must be {shape}, not {value}"),
                ))
            };
            match key.as_str() {
                "$ref" => match value.as_str() {
                    Some(reference) => {
                        keywords.reference = Some(self.reference(reference, &here())?)
                    }
                    None => return wrong("a string"),
                },
                "$dynamicRef" | "$recursiveRef" => {
                    return Err(located(&here(), &format!("\"{key}\" is not supported")));
                }
                "$id" if !at.is_empty() => {
                    return Err(located(
                        &here(),
                        "\"$id\" below the root (an embedded schema resource) is not supported",
                    ));
                }
                "type" => match types(value) {
                    Some(types) => keywords.types = Some(types),
                    None => return wrong("a type name or an array of distinct type names"),
                },
                "enum" => match value {
                    Value::Array(values) => keywords.one_of_values = Some(values.clone()),
                    _ => return wrong("an array"),
                },
                "const" => keywords.constant = Some(value.clone()),
                "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                    let slot = match key.as_str() {
                        "minimum" => &mut minimum,
                        "maximum" => &mut maximum,
                        "exclusiveMinimum" => &mut exclusive_minimum,
                        _ => &mut exclusive_maximum,
                    };
                    match value {
                        Value::Number(_) => *slot = Some(value),
                        // Draft 4's form: a flag on `minimum`/`maximum`.
                        Value::Bool(_) if key.starts_with("exclusive") => *slot = Some(value),
                        _ => return wrong("a number"),
                    }
                }
                "multipleOf" => match value {
                    Value::Number(number) if number.as_f64().is_some_and(|n| n > 0.0) => {
                        keywords.multiple_of = Some(number.clone())
                    }
                    _ => return wrong("a number above 0"),
                },
                "minLength" | "maxLength" | "minItems" | "maxItems" | "minContains"
                | "maxContains" | "minProperties" | "maxProperties" => {
                    let Some(count) = count(value) else {
                        return wrong("a non-negative integer");
                    };
                    *match key.as_str() {
                        "minLength" => &mut keywords.min_length,
                        "maxLength" => &mut keywords.max_length,
                        "minItems" => &mut keywords.min_items,
                        "maxItems" => &mut keywords.max_items,
                        "minContains" => &mut keywords.min_contains,
                        "maxContains" => &mut keywords.max_contains,
                        "minProperties" => &mut keywords.min_properties,
                        _ => &mut keywords.max_properties,
                    } = Some(count);
                }
                "pattern" => keywords.pattern = Some(pattern(value, &here())?),
                "format" => match value.as_str() {
                    Some(name) => {
                        keywords.format = format::checker(name).map(|conforms| Format {
                            name: name.to_owned(),
                            conforms,
                        })
                    }
                    None => return wrong("a string"),
                },
                "uniqueItems" => match value {
                    Value::Bool(unique) => keywords.unique_items = *unique,
                    _ => return wrong("a boolean"),
                },
                "required" => match strings(value) {
                    Some(names) => keywords.required = names,
                    None => return wrong("an array of strings"),
                },
                "dependentRequired" => {
                    keywords.dependent_required = self.dependent_required(value, &here())?
                }
                "dependencies" => self.dependencies(value, &here(), &mut keywords)?,
                "prefixItems" => keywords.prefix_items = self.schemas(value, &here())?,
                "items" => match value {
                    // Drafts before 2020-12: an array of schemas is `prefixItems`.
                    Value::Array(_) => {
                        keywords.prefix_items = self.schemas(value, &here())?;
                        if let Some(rest) = map.get("additionalItems") {
                            keywords.items = Some(self.node(rest, format!("{at}/additionalItems")));
                        }
                    }
                    _ => keywords.items = Some(self.node(value, here())),
                },
                "contains" => keywords.contains = Some(self.node(value, here())),
                "unevaluatedItems" => keywords.unevaluated_items = Some(self.node(value, here())),
                "properties" => {
                    keywords.properties = self.named_schemas(value, &here())?;
                    keywords.properties.sort_by(|a, b| a.0.cmp(&b.0));
                }
                "patternProperties" => {
                    let Value::Object(patterns) = value else {
                        return wrong("an object");
                    };
                    for (source, schema) in patterns {
                        let place = format!("{}/{}", here(), escape(source));
                        let regex = pattern(&Value::String(source.clone()), &place)?;
                        keywords
                            .pattern_properties
                            .push((regex, self.node(schema, place)));
                    }
                }
                "additionalProperties" => {
                    keywords.additional_properties = Some(self.node(value, here()))
                }
                "propertyNames" => keywords.property_names = Some(self.node(value, here())),
                "unevaluatedProperties" => {
                    keywords.unevaluated_properties = Some(self.node(value, here()))
                }
                "dependentSchemas" => {
                    keywords.dependent_schemas = self.named_schemas(value, &here())?
                }
                // Not applied by themselves; compiled so their problems are found.
                "$defs" | "definitions" => {
                    self.named_schemas(value, &here())?;
                }
                "allOf" | "anyOf" | "oneOf" => {
                    let schemas = self.schemas(value, &here())?;
                    if schemas.is_empty() {
                        return wrong("a non-empty array of schemas");
                    }
                    *match key.as_str() {
                        "allOf" => &mut keywords.all_of,
                        "anyOf" => &mut keywords.any_of,
                        _ => &mut keywords.one_of,
                    } = schemas;
                }
                "not" => keywords.not = Some(self.node(value, here())),
                "if" => {
                    let branch = |compiler: &mut Self, name: &str| {
                        map.get(name)
                            .map(|schema| compiler.node(schema, format!("{at}/{name}")))
                    };
                    keywords.condition = Some(Condition {
                        test: self.node(value, here()),
                        then: branch(self, "then"),
                        otherwise: branch(self, "else"),
                    });
                }
                _ => {}
            }
        }
        keywords.minimum = bound(minimum, exclusive_minimum, std::cmp::Ordering::Greater);
        keywords.maximum = bound(maximum, exclusive_maximum, std::cmp::Ordering::Less);
        Ok(keywords)
    }

    /// An array of schemas, compiled.
    fn schemas(&mut self, value: &'s Value, at: &str) -> Result<Vec<NodeId>, String> {
        let Value::Array(schemas) = value else {
            return Err(located(
                at,
                &format!("must be an array of schemas, not {value}"),
            ));
        };
        Ok(schemas
            .iter()
            .enumerate()
            .map(|(index, schema)| self.node(schema, format!("{at}/{index}")))
            .collect())
    }

    /// An object of schemas, compiled, by name.
    fn named_schemas(
        &mut self,
        value: &'s Value,
        at: &str,
    ) -> Result<Vec<(String, NodeId)>, String> {
        let Value::Object(schemas) = value else {
            return Err(located(
                at,
                &format!("must be an object of schemas, not {value}"),
            ));
        };
        Ok(schemas
            .iter()
            .map(|(name, schema)| {
                (
                    name.clone(),
                    self.node(schema, format!("{at}/{}", escape(name))),
                )
            })
            .collect())
    }

    fn dependent_required(
        &mut self,
        value: &Value,
        at: &str,
    ) -> Result<Vec<(String, Vec<String>)>, String> {
        let Value::Object(map) = value else {
            return Err(located(at, &format!("must be an object, not {value}")));
        };
        map.iter()
            .map(|(name, needed)| match strings(needed) {
                Some(needed) => Ok((name.clone(), needed)),
                None => Err(located(at, &format!("\"{name}\" must list property names"))),
            })
            .collect()
    }

    /// Draft 7's `dependencies`: arrays are `dependentRequired`, schemas `dependentSchemas`.
    fn dependencies(
        &mut self,
        value: &'s Value,
        at: &str,
        keywords: &mut Keywords,
    ) -> Result<(), String> {
        let Value::Object(map) = value else {
            return Err(located(at, &format!("must be an object, not {value}")));
        };
        for (name, dependency) in map {
            match (dependency, strings(dependency)) {
                (Value::Array(_), Some(needed)) => {
                    keywords.dependent_required.push((name.clone(), needed))
                }
                _ => {
                    let id = self.node(dependency, format!("{at}/{}", escape(name)));
                    keywords.dependent_schemas.push((name.clone(), id));
                }
            }
        }
        Ok(())
    }

    /// The node a `$ref` names: a JSON pointer or an `$anchor` in this document.
    fn reference(&mut self, reference: &str, at: &str) -> Result<NodeId, String> {
        let local = match reference.strip_prefix(self.base) {
            Some(rest) if !self.base.is_empty() => rest,
            _ => reference,
        };
        let fragment = match local.strip_prefix('#') {
            Some(fragment) => fragment,
            None if local.is_empty() => "",
            None => {
                return Err(located(
                    at,
                    &format!(
                        "\"$ref\" {reference:?} points outside the schema; only references \
                         within it (\"#…\") are supported"
                    ),
                ));
            }
        };
        let missing = || located(at, &format!("\"$ref\" {reference:?} points at nothing"));
        let pointer = match fragment.chars().next() {
            None => String::new(),
            Some('/') => percent_decode(fragment).ok_or_else(missing)?,
            Some(_) => self.anchor(fragment).ok_or_else(missing)?,
        };
        let target = self.root.pointer(&pointer).ok_or_else(missing)?;
        Ok(self.node(target, pointer))
    }

    fn anchor(&mut self, name: &str) -> Option<String> {
        let root = self.root;
        self.anchors
            .get_or_insert_with(|| {
                let mut anchors = HashMap::new();
                collect_anchors(root, String::new(), &mut anchors);
                anchors
            })
            .get(name)
            .cloned()
    }
}

fn collect_anchors(value: &Value, pointer: String, anchors: &mut HashMap<String, String>) {
    match value {
        Value::Object(map) => {
            // A plain `$ref` to a `$dynamicAnchor` resolves as to an `$anchor`.
            for keyword in ["$anchor", "$dynamicAnchor"] {
                if let Some(name) = map.get(keyword).and_then(Value::as_str) {
                    anchors.insert(name.to_owned(), pointer.clone());
                }
            }
            for (key, member) in map {
                collect_anchors(member, format!("{pointer}/{}", escape(key)), anchors);
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                collect_anchors(item, format!("{pointer}/{index}"), anchors);
            }
        }
        _ => {}
    }
}

/// A key as a JSON pointer token.
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn types(value: &Value) -> Option<Types> {
    match value {
        Value::String(name) => Types::named(name),
        Value::Array(names) => names.iter().try_fold(Types::empty(), |set, name| {
            let bit = Types::named(name.as_str()?)?;
            (!set.has_any(bit)).then(|| set.with(bit))
        }),
        _ => None,
    }
}

/// A non-negative integer (`2.0` counts, as the meta-schema's `integer` does).
fn count(value: &Value) -> Option<u64> {
    let number = value.as_number()?;
    number.as_u64().or_else(|| {
        number
            .as_f64()
            .filter(|n| *n >= 0.0 && n.fract() == 0.0)
            .map(|n| n as u64)
    })
}

fn strings(value: &Value) -> Option<Vec<String>> {
    value
        .as_array()?
        .iter()
        .map(|name| name.as_str().map(str::to_owned))
        .collect()
}

fn pattern(value: &Value, at: &str) -> Result<Pattern, String> {
    let Some(source) = value.as_str() else {
        return Err(located(
            at,
            &format!("a pattern must be a string, not {value}"),
        ));
    };
    regex_lite::Regex::new(source)
        .map(|regex| Pattern {
            regex,
            source: source.to_owned(),
        })
        .map_err(|error| located(at, &format!("pattern {source:?} does not compile: {error}")))
}

/// The bound `inclusive` and `exclusive` give together: the tighter one (`tighter` is how
/// a tighter limit compares: greater for a minimum). Draft 4's boolean `exclusive…` makes
/// the inclusive limit exclusive.
fn bound(
    inclusive: Option<&Value>,
    exclusive: Option<&Value>,
    tighter: std::cmp::Ordering,
) -> Option<Bound> {
    let number = |value: Option<&Value>| value.and_then(Value::as_number).cloned();
    let draft4 = exclusive.and_then(Value::as_bool);
    let inclusive = number(inclusive).map(|limit| Bound {
        limit,
        exclusive: draft4 == Some(true),
    });
    let exclusive = number(exclusive).map(|limit: Number| Bound {
        limit,
        exclusive: true,
    });
    match (inclusive, exclusive) {
        (Some(inclusive), Some(exclusive)) => {
            let order = super::value::compare(&exclusive.limit, &inclusive.limit);
            Some(if order == tighter || order.is_eq() {
                exclusive
            } else {
                inclusive
            })
        }
        (inclusive, exclusive) => inclusive.or(exclusive),
    }
}

/// A node that reaches itself through subschemas applied to the same value, if any.
fn first_cycle(nodes: &[Node]) -> Option<NodeId> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let next = |id: NodeId| -> Vec<NodeId> {
        match &nodes[id] {
            Node::Keywords(keywords) => keywords.in_place().collect(),
            Node::Always(_) => Vec::new(),
        }
    };
    let mut marks = vec![Mark::New; nodes.len()];
    for start in 0..nodes.len() {
        if marks[start] != Mark::New {
            continue;
        }
        marks[start] = Mark::Open;
        let mut stack = vec![(start, next(start), 0usize)];
        while let Some((id, children, index)) = stack.last_mut() {
            match children.get(*index).copied() {
                Some(child) => {
                    *index += 1;
                    match marks[child] {
                        Mark::Open => return Some(child),
                        Mark::New => {
                            marks[child] = Mark::Open;
                            let grandchildren = next(child);
                            stack.push((child, grandchildren, 0));
                        }
                        Mark::Done => {}
                    }
                }
                None => {
                    marks[*id] = Mark::Done;
                    stack.pop();
                }
            }
        }
    }
    None
}
