//! The `*NAME_MAP` table and the resolution of `*12`, `*12:3` and `*5:A` references.

use std::borrow::Cow;
use std::collections::HashMap;

use crate::lexer::{error, SyntaxError};
use crate::model::Name;

/// The name map: id -> name. Ids are usually dense small integers, so a vector indexed by
/// id is used when it would not be much larger than the table; a hash map otherwise.
#[derive(Debug)]
pub(crate) enum NameMap<'a> {
    Dense(Vec<Option<&'a str>>),
    Sparse(HashMap<u64, &'a str>),
}

impl<'a> NameMap<'a> {
    /// Builds the table from `(id, name)` entries in file order; a repeated id keeps the
    /// last name.
    pub(crate) fn new(entries: Vec<(u64, &'a str)>) -> Self {
        let max_id = entries.iter().map(|&(id, _)| id).max().unwrap_or(0);
        let dense_limit = (entries.len() as u64)
            .saturating_mul(4)
            .saturating_add(1024);
        if max_id < dense_limit {
            let length = usize::try_from(max_id).unwrap_or(0) + 1;
            let mut table = vec![None; length];
            for (id, name) in entries {
                if let Some(slot) = usize::try_from(id)
                    .ok()
                    .and_then(|index| table.get_mut(index))
                {
                    *slot = Some(name);
                }
            }
            NameMap::Dense(table)
        } else {
            NameMap::Sparse(entries.into_iter().collect())
        }
    }

    /// The name of `id`, if the map defines it.
    #[inline]
    pub(crate) fn get(&self, id: u64) -> Option<&'a str> {
        match self {
            NameMap::Dense(table) => usize::try_from(id)
                .ok()
                .and_then(|index| table.get(index).copied().flatten()),
            NameMap::Sparse(table) => table.get(&id).copied(),
        }
    }
}

/// Resolves a name token: `*12` becomes the mapped name (borrowed), `*12:3` or `*5:A`
/// becomes the mapped name followed by the rest of the token as written (built), and any
/// other token is the name itself (borrowed). Keywords and the end of the input are not
/// names: they fail with `expected`.
#[inline]
pub(crate) fn resolve<'a>(
    token: &'a str,
    names: &NameMap<'a>,
    expected: &'static str,
) -> Result<Cow<'a, str>, nom::Err<SyntaxError<'a>>> {
    resolve_name(token, names, expected).map(|name| name.as_str())
}

/// [`resolve`] without building anything: the mapped name and the rest of the token as
/// written, as a [`Name`].
#[inline]
pub(crate) fn resolve_name<'a>(
    token: &'a str,
    names: &NameMap<'a>,
    expected: &'static str,
) -> Result<Name<'a>, nom::Err<SyntaxError<'a>>> {
    let bytes = token.as_bytes();
    if bytes.first() != Some(&b'*') {
        if token.is_empty() {
            return Err(error(token, expected));
        }
        return Ok(Name::from(token));
    }
    // One pass over the digits after `*`: at most 19 digits always fit in a u64.
    let mut id: u64 = 0;
    let mut end = 1;
    while let Some(&byte) = bytes.get(end) {
        if !byte.is_ascii_digit() {
            break;
        }
        id = id.wrapping_mul(10).wrapping_add(u64::from(byte - b'0'));
        end += 1;
    }
    let n_digits = end - 1;
    if n_digits == 0 || n_digits > 19 {
        return Err(error(token, expected));
    }
    let Some(mapped) = names.get(id) else {
        return Err(error(token, "a name-map id defined in *NAME_MAP"));
    };
    // The digits are ASCII, so `end` is a character boundary.
    Ok(Name::new(mapped, token.get(end..).unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn describe(result: Result<Cow<'_, str>, nom::Err<SyntaxError<'_>>>) -> String {
        match result {
            Ok(name) => name.into_owned(),
            Err(nom::Err::Error(error) | nom::Err::Failure(error)) => {
                format!("error: {}", error.expected)
            }
            Err(nom::Err::Incomplete(_)) => "incomplete".to_string(),
        }
    }

    #[test]
    fn references_resolve_through_the_map() {
        let names = NameMap::new(vec![(12, "net_7"), (5, "inst_0")]);
        assert_eq!(describe(resolve("*12", &names, "a name")), "net_7");
        assert_eq!(describe(resolve("*12:3", &names, "a name")), "net_7:3");
        assert_eq!(describe(resolve("*5:A", &names, "a name")), "inst_0:A");
        assert_eq!(describe(resolve("plain:Z", &names, "a name")), "plain:Z");
        assert_eq!(
            describe(resolve("*99", &names, "a name")),
            "error: a name-map id defined in *NAME_MAP"
        );
        assert_eq!(
            describe(resolve("*CAP", &names, "a node name")),
            "error: a node name"
        );
        assert_eq!(
            describe(resolve("", &names, "a node name")),
            "error: a node name"
        );
    }

    #[test]
    fn sparse_ids_use_a_hash_map() {
        let names = NameMap::new(vec![(u64::MAX - 1, "far"), (1, "near")]);
        assert!(matches!(names, NameMap::Sparse(_)));
        assert_eq!(names.get(u64::MAX - 1), Some("far"));
        assert_eq!(names.get(1), Some("near"));
        assert_eq!(names.get(2), None);
    }
}
