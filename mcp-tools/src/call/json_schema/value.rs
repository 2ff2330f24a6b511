//! JSON values as JSON Schema compares them: numbers by their mathematical value (so `1`
//! and `1.0` are equal and `2` is a multiple of `0.5`), exactly where the JSON text allows,
//! and whole values by structure, with that number equality.

use std::cmp::Ordering;

use serde_json::{Number, Value};

/// `a` against `b`, by value: integers exactly, a fraction against an integer without
/// rounding the integer to a float.
pub(super) fn compare(a: &Number, b: &Number) -> Ordering {
    match (integer(a), integer(b)) {
        (Some(a), Some(b)) => a.cmp(&b),
        (Some(a), None) => compare_float(float(b), a).reverse(),
        (None, Some(b)) => compare_float(float(a), b),
        (None, None) => float(a).total_cmp(&float(b)),
    }
}

/// Whether `value` is a whole number (`1.0` is: JSON Schema's `integer` is a value, not a
/// spelling).
pub(super) fn is_integral(value: &Number) -> bool {
    integer(value).is_some() || float(value).fract() == 0.0
}

/// Whether `value` is `divisor` times a whole number, decided exactly on the decimal values
/// the numbers were written as (`0.3` is a multiple of `0.1`, `1e300` is not one of `7e200`),
/// where a float's binary rounding would say otherwise.
pub(super) fn is_multiple(value: &Number, divisor: &Number) -> bool {
    let (Some((value, value_power)), Some((divisor, divisor_power))) =
        (decimal(value), decimal(divisor))
    else {
        return false;
    };
    if value == 0 {
        return true;
    }
    if divisor == 0 {
        return false;
    }
    if value_power >= divisor_power {
        // divisor | value·10^k exactly when divisor / gcd(divisor, 10^k) divides value.
        let mut rest = divisor.abs();
        for _ in 0..(value_power - divisor_power) {
            let common = gcd(rest, 10);
            if common == 1 {
                break;
            }
            rest /= common;
        }
        value % rest == 0
    } else {
        // value | divisor·10^k: a divisor scaled past i128 exceeds any mantissa here.
        10i128
            .checked_pow((divisor_power - value_power).unsigned_abs())
            .and_then(|scale| divisor.checked_mul(scale))
            .is_some_and(|scaled| value % scaled == 0)
    }
}

fn gcd(mut a: i128, mut b: i128) -> i128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Whether two JSON values are equal as JSON Schema's `enum`, `const` and `uniqueItems`
/// mean it: numbers by value, arrays in order, objects by their keys and values.
pub(super) fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(a), Value::Number(b)) => compare(a, b) == Ordering::Equal,
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| equal(a, b))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(key, value)| b.get(key).is_some_and(|other| equal(value, other)))
        }
        _ => a == b,
    }
}

/// Writes `value` so that two values are [`equal`] exactly when their texts are: object keys
/// sorted (serde_json's map keeps them so), integral numbers without a fraction.
pub(super) fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Number(number) => match integer(number) {
            Some(whole) => out.push_str(itoa::Buffer::new().format(whole)),
            None if is_integral(number) && float(number).abs() < 1e38 => {
                out.push_str(itoa::Buffer::new().format(float(number) as i128))
            }
            None => out.push_str(&number.to_string()),
        },
        Value::Array(items) => {
            out.push('[');
            for item in items {
                canonical(item, out);
                out.push(',');
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (key, value) in map {
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical(value, out);
                out.push(',');
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

fn integer(number: &Number) -> Option<i128> {
    number
        .as_i64()
        .map(i128::from)
        .or_else(|| number.as_u64().map(i128::from))
}

fn float(number: &Number) -> f64 {
    number.as_f64().unwrap_or(f64::NAN)
}

/// A float against an integer, exactly: the integer part first, then the fraction.
fn compare_float(float: f64, integer: i128) -> Ordering {
    // Every i128 that a JSON integer can hold (u64 or i64) lies well inside ±2^127.
    if float >= 1.7e38 {
        return Ordering::Greater;
    }
    if float <= -1.7e38 {
        return Ordering::Less;
    }
    let whole = float.trunc();
    match (whole as i128).cmp(&integer) {
        Ordering::Equal => float.fract().partial_cmp(&0.0).unwrap_or(Ordering::Equal),
        unequal => unequal,
    }
}

/// A number as `mantissa × 10^exponent`, read from the shortest text that gives it back
/// (how serde_json writes numbers: at most 17 digits, so the mantissa always fits).
fn decimal(number: &Number) -> Option<(i128, i32)> {
    if let Some(whole) = integer(number) {
        return Some((whole, 0));
    }
    let text = number.to_string();
    let (digits, exponent) = match text.split_once(['e', 'E']) {
        Some((digits, exponent)) => (digits, exponent.parse::<i32>().ok()?),
        None => (text.as_str(), 0),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let mantissa: i128 = format!("{whole}{fraction}").parse().ok()?;
    let exponent = exponent.checked_sub(i32::try_from(fraction.len()).ok()?)?;
    Some((mantissa, exponent))
}

#[cfg(test)]
mod tests {
    use std::cmp::Ordering;

    use serde_json::{Number, Value, json};

    use super::{canonical, compare, equal, is_integral, is_multiple};

    fn number(value: Value) -> Number {
        match value {
            Value::Number(number) => number,
            other => panic!("not a number: {other}"),
        }
    }

    #[test]
    fn numbers_compare_by_value_across_representations() {
        let cases = [
            (json!(1), json!(1.0), Ordering::Equal),
            (json!(1), json!(1.5), Ordering::Less),
            (json!(-1), json!(-0.5), Ordering::Less),
            (json!(u64::MAX), json!(i64::MIN), Ordering::Greater),
            // 2^53 + 1 is not a float; it is still above the float 2^53.
            (
                json!(9_007_199_254_740_993u64),
                json!(9_007_199_254_740_992.0),
                Ordering::Greater,
            ),
            (json!(100), json!(1e300), Ordering::Less),
            (json!(-100), json!(-1e300), Ordering::Greater),
            (json!(0.25), json!(0.5), Ordering::Less),
        ];
        for (a, b, expected) in cases {
            assert_eq!(
                compare(&number(a.clone()), &number(b.clone())),
                expected,
                "{a} vs {b}"
            );
            assert_eq!(
                compare(&number(b.clone()), &number(a.clone())),
                expected.reverse(),
                "{b} vs {a}"
            );
        }
    }

    #[test]
    fn integral_means_a_whole_value() {
        assert!(is_integral(&number(json!(3))));
        assert!(is_integral(&number(json!(3.0))));
        assert!(is_integral(&number(json!(1e30))));
        assert!(!is_integral(&number(json!(3.5))));
    }

    #[test]
    fn multiples_are_decided_on_decimal_values() {
        let yes = [
            (json!(10), json!(5)),
            (json!(0.3), json!(0.1)),
            (json!(4.5), json!(1.5)),
            (json!(1e-7), json!(1e-8)),
            (json!(0), json!(0.7)),
            (json!(-6), json!(3)),
        ];
        for (value, divisor) in yes {
            assert!(
                is_multiple(&number(value.clone()), &number(divisor.clone())),
                "{value} / {divisor}"
            );
        }
        let no = [
            (json!(7), json!(2)),
            (json!(0.35), json!(0.1)),
            (json!(1), json!(0.3)),
            (json!(1e-8), json!(1e-7)),
        ];
        for (value, divisor) in no {
            assert!(
                !is_multiple(&number(value.clone()), &number(divisor.clone())),
                "{value} / {divisor}"
            );
        }
        // Far apart, beyond what i128 can scale.
        assert!(is_multiple(&number(json!(1e300)), &number(json!(1e200))));
        assert!(is_multiple(&number(json!(1e300)), &number(json!(2.5e-300))));
        assert!(!is_multiple(&number(json!(1e300)), &number(json!(7e200))));
        assert!(!is_multiple(&number(json!(1e-300)), &number(json!(1e300))));
    }

    #[test]
    fn equality_and_canonical_text_agree() {
        let pairs = [
            (json!(1), json!(1.0), true),
            (json!([1, {"a": 2.0}]), json!([1.0, {"a": 2}]), true),
            (json!({"a": 1, "b": 2}), json!({"b": 2, "a": 1}), true),
            (json!([1, 2]), json!([2, 1]), false),
            (json!({"a": 1}), json!({"a": 1, "b": null}), false),
            (json!("1"), json!(1), false),
            (json!(null), json!(false), false),
        ];
        for (a, b, same) in pairs {
            assert_eq!(equal(&a, &b), same, "{a} == {b}");
            let (mut ta, mut tb) = (String::new(), String::new());
            canonical(&a, &mut ta);
            canonical(&b, &mut tb);
            assert_eq!(ta == tb, same, "{ta} vs {tb}");
        }
    }
}
