//! `String.prototype.localeCompare` as Node runs it for Pi's listing tie-break: ICU collation
//! (the Unicode Collation Algorithm with CLDR's data, here ICU4X's compiled data) in Node's
//! default locale, which Node takes from the environment when it starts.

use std::cmp::Ordering;
use std::sync::OnceLock;

use icu_collator::options::CollatorOptions;
use icu_collator::{Collator, CollatorBorrowed, CollatorPreferences};
use icu_locale_core::Locale;

/// The locale Node takes from an environment (`var` reads a variable): the first of `LC_ALL`,
/// `LC_MESSAGES` and `LANG` that is set, even to nothing (`LC_COLLATE` is not read); its language
/// and region, without the codeset (`.UTF-8`) or modifier (`@euro`). None set, `C` and `POSIX`
/// give `en-US`; an empty value gives the root collation, `und`.
pub fn node_locale(var: impl Fn(&str) -> Option<String>) -> String {
    let Some(value) = ["LC_ALL", "LC_MESSAGES", "LANG"].into_iter().find_map(&var) else {
        return "en-US".to_owned();
    };
    let name = value.split(['.', '@']).next().unwrap_or_default();
    match name {
        "" if value.is_empty() => "und".to_owned(),
        "C" | "POSIX" | "" => "en-US".to_owned(),
        _ => name.replace('_', "-"),
    }
}

/// A collator as `localeCompare` uses it: the locale's default options (tertiary strength).
pub fn collator(locale: &str) -> CollatorBorrowed<'static> {
    let locale = Locale::try_from_str(locale).unwrap_or(Locale::UNKNOWN);
    match Collator::try_new(CollatorPreferences::from(&locale), CollatorOptions::default()) {
        Ok(c) => c,
        // The compiled data always has the root collation.
        Err(_) => Collator::try_new(CollatorPreferences::from(&Locale::UNKNOWN), CollatorOptions::default())
            .unwrap_or_else(|_| unreachable!("the root collation is compiled in")),
    }
}

/// The process's collator, made on first use from its environment as Node's would be (the
/// environment is the process's own input, read once, as Node reads it once).
fn process_collator() -> &'static CollatorBorrowed<'static> {
    static COLLATOR: OnceLock<CollatorBorrowed<'static>> = OnceLock::new();
    COLLATOR.get_or_init(|| {
        let locale = node_locale(|k| std::env::var_os(k).map(|v| v.to_string_lossy().into_owned()));
        collator(&locale)
    })
}

/// `a.localeCompare(b)` in the process's locale. Only ties in `modified` and `mtime` reach it.
pub fn locale_compare(a: &str, b: &str) -> Ordering {
    process_collator().compare(a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_locale_comes_from_the_environment_as_node_takes_it() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(name, _)| *name == k).map(|(_, v)| (*v).to_owned())
        };
        assert_eq!(node_locale(env(&[])), "en-US");
        assert_eq!(node_locale(env(&[("LANG", "C.UTF-8")])), "en-US");
        assert_eq!(node_locale(env(&[("LANG", "POSIX")])), "en-US");
        assert_eq!(node_locale(env(&[("LANG", "")])), "und");
        assert_eq!(node_locale(env(&[("LANG", "sv_SE.UTF-8")])), "sv-SE");
        assert_eq!(node_locale(env(&[("LANG", "de_DE@euro")])), "de-DE");
        assert_eq!(node_locale(env(&[("LC_ALL", "sv_SE.UTF-8"), ("LANG", "de_DE")])), "sv-SE");
        assert_eq!(node_locale(env(&[("LC_MESSAGES", "sv_SE"), ("LANG", "de_DE")])), "sv-SE");
        assert_eq!(node_locale(env(&[("LC_ALL", ""), ("LANG", "sv_SE.UTF-8")])), "und");
        assert_eq!(node_locale(env(&[("LC_COLLATE", "sv_SE.UTF-8")])), "en-US");
    }

    #[test]
    fn swedish_puts_a_diaeresis_after_z() {
        assert_eq!(collator("sv-SE").compare("ä", "z"), Ordering::Greater);
        assert_eq!(collator("en-US").compare("ä", "z"), Ordering::Less);
        assert_eq!(collator("und").compare("b", "B"), Ordering::Less);
    }
}
