//! The compiled subscription's walkers as the native walk reads them: per branch its XPath
//! template's pieces and its steps (kind, member spellings, keys, filters), built once from
//! ``yangkey.native.tables``'s plain data of a ``CompiledSubscription``
//! (``yangkey.walker`` generates the reference's walkers from the same compiled branches).
//!
//! A child module of walk.rs.

use pyo3::prelude::*;

/// How a key value or filter value is made canonical (``yangkey.values``).
pub(crate) enum Canon {
    /// ``canon_string``: text as written, integers and booleans as Python writes them.
    Str,
    /// ``canon_integer``: decimal without sign ``+`` or leading zeros.
    Int,
    /// Any other converter: the reference's own callable, called on the Python value.
    Py(Py<PyAny>),
}

pub(crate) struct Slot {
    pub(crate) member: String,
    /// ``module:member``, the redundantly qualified spelling the walker reads second.
    pub(crate) qualified: String,
    pub(crate) canon: Canon,
    pub(crate) pinned: Option<String>,
    pub(crate) positional: bool,
}

pub(crate) struct Filter {
    pub(crate) member: String,
    pub(crate) qualified: String,
    pub(crate) canon: Canon,
    pub(crate) value: String,
}

#[derive(PartialEq, Eq, Clone, Copy)]
pub(crate) enum Kind {
    Container,
    List,
    LeafList,
    Leaf,
}

pub(crate) struct Step {
    pub(crate) kind: Kind,
    pub(crate) member: String,
    pub(crate) qualified: String,
    pub(crate) keys: Vec<Slot>,
    pub(crate) filters: Vec<Filter>,
}

pub(crate) struct Branch {
    /// The pieces' total length: a rendered XPath's size but for its values.
    pub(crate) size: usize,
    pub(crate) pieces: Vec<String>,
    pub(crate) bare: Vec<bool>,
    pub(crate) steps: Vec<Step>,
    /// ``Branch.open_after``: ``[i]`` whether a step from ``i`` on has an open placeholder.
    pub(crate) open_after: Vec<bool>,
    /// Whether the branch ends in a list's entries below containers alone, no step with a
    /// filter, the list's keys all named (none positional): a yang-patch edit whose target
    /// names one of its entries then takes patchwalk.rs's short way (``Run::entry_edit``).
    pub(crate) entry_chain: bool,
}

impl Branch {
    /// A branch without steps (no walk: it has no instance).
    pub(crate) fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }
}

/// A compiled subscription's walkers, built once from ``yangkey.native.tables``.
#[pyclass(module = "yangkey_native", frozen)]
pub struct Walker {
    pub(crate) branches: Vec<Branch>,
    /// [`Walker::names`], worked out once.
    pub(crate) names: Vec<String>,
    /// Per branch its instance feed (feed.rs), when built with ``feeds``.
    pub(crate) feeds: Option<Vec<crate::feed::Feed>>,
}

fn canon_of(value: &Bound<'_, PyAny>) -> PyResult<Canon> {
    if let Ok(name) = value.extract::<String>() {
        return match name.as_str() {
            "string" => Ok(Canon::Str),
            "integer" => Ok(Canon::Int),
            _ => Err(pyo3::exceptions::PyValueError::new_err(format!(
                "yangkey_native.Walker: unknown canon {name:?}"
            ))),
        };
    }
    Ok(Canon::Py(value.clone().unbind()))
}

fn kind_of(name: &str) -> PyResult<Kind> {
    Ok(match name {
        "container" => Kind::Container,
        "list" => Kind::List,
        "leaf-list" => Kind::LeafList,
        "leaf" => Kind::Leaf,
        _ => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "yangkey_native.Walker: unknown step kind {name:?}"
            )))
        }
    })
}

type SlotData<'py> = (String, Bound<'py, PyAny>, Option<String>, bool);
type FilterData<'py> = (String, String, Bound<'py, PyAny>, String);
type StepData<'py> = (
    String,
    String,
    String,
    String,
    Vec<SlotData<'py>>,
    Vec<FilterData<'py>>,
);
type BranchData<'py> = (Vec<String>, Vec<bool>, Vec<StepData<'py>>);

#[pymethods]
impl Walker {
    /// ``branches``: per branch ``(pieces, positional, steps)``, a step ``(kind, module,
    /// member, qualified_member, keys, filters)``, a key ``(member, canon, pinned,
    /// positional)``, a filter ``(member, qualified_member, canon, value)``; a canon is
    /// ``"string"``, ``"integer"`` or the reference's callable.
    /// ``feeds``: per branch its instance feed's table (``yangkey.native.feed_table``).
    #[new]
    #[pyo3(signature = (branches, feeds=None))]
    fn new(branches: Vec<BranchData<'_>>, feeds: Option<Vec<Bound<'_, PyAny>>>) -> PyResult<Self> {
        let mut built = Vec::new();
        for (pieces, bare, steps) in branches {
            if bare.len() + 1 != pieces.len() {
                return Err(pyo3::exceptions::PyValueError::new_err(
                    "yangkey_native.Walker: pieces and positional disagree",
                ));
            }
            let mut compiled = Vec::new();
            for (kind, module, member, qualified, keys, filters) in steps {
                let mut slots = Vec::new();
                for (key, canon, pinned, positional) in keys {
                    slots.push(Slot {
                        qualified: format!("{module}:{key}"),
                        member: key,
                        canon: canon_of(&canon)?,
                        pinned,
                        positional,
                    });
                }
                let mut checks = Vec::new();
                for (name, qualified_name, canon, value) in filters {
                    checks.push(Filter {
                        member: name,
                        qualified: qualified_name,
                        canon: canon_of(&canon)?,
                        value,
                    });
                }
                compiled.push(Step {
                    kind: kind_of(&kind)?,
                    member,
                    qualified,
                    keys: slots,
                    filters: checks,
                });
            }
            let mut open_after = vec![false; compiled.len() + 1];
            for (index, step) in compiled.iter().enumerate().rev() {
                open_after[index] =
                    open_after[index + 1] || step.keys.iter().any(|k| k.pinned.is_none());
            }
            let entry_chain = compiled.split_last().is_some_and(|(list, above)| {
                list.kind == Kind::List
                    && !list.keys.is_empty()
                    && list.keys.iter().all(|k| !k.positional)
                    && list.filters.is_empty()
                    && above
                        .iter()
                        .all(|s| s.kind == Kind::Container && s.filters.is_empty())
            });
            built.push(Branch {
                size: pieces.iter().map(String::len).sum(),
                pieces,
                bare,
                steps: compiled,
                open_after,
                entry_chain,
            });
        }
        let feeds = match feeds {
            None => None,
            Some(feeds) if feeds.len() == built.len() => Some(
                feeds
                    .iter()
                    .map(crate::feed::Feed::new)
                    .collect::<PyResult<Vec<_>>>()?,
            ),
            Some(_) => {
                return Err(pyo3::exceptions::PyValueError::new_err(
                    "yangkey_native.Walker: one feed per branch",
                ))
            }
        };
        let mut walker = Walker {
            branches: built,
            feeds,
            names: Vec::new(),
        };
        walker.names = walker.read_names();
        Ok(walker)
    }
}

impl Walker {
    /// Every member name the walk looks up (steps, keys, filters; plain and qualified): a
    /// member named otherwise is never read (xmlkeys.rs leaves it out of the tape).
    pub fn names(&self) -> &[String] {
        &self.names
    }

    fn read_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for step in self.branches.iter().flat_map(|b| &b.steps) {
            let keys = step.keys.iter().flat_map(|k| [&k.member, &k.qualified]);
            let filters = step.filters.iter().flat_map(|f| [&f.member, &f.qualified]);
            for name in [&step.member, &step.qualified]
                .into_iter()
                .chain(keys)
                .chain(filters)
            {
                if !names.contains(name) {
                    names.push(name.clone());
                }
            }
        }
        names
    }
}
