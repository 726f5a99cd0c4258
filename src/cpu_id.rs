//! What identifies this machine's CPU beyond its model name, for `bench`'s `cpu_id`: a
//! virtual machine's `/proc/cpuinfo` may call two CPU generations by one name ("AMD EPYC"),
//! and their timing ratios differ (faer's dense kernels take AVX-512 where it exists).

/// This machine's CPU model, as `/proc/cpuinfo`'s `model name` gives it, and its
/// [`identification`] (`"family F model M stepping S, N logical CPUs, SIMD"`), from one read
/// of the file; "unknown" for both elsewhere.
pub fn cpu_model_and_id() -> (String, String) {
    match std::fs::read_to_string("/proc/cpuinfo") {
        Ok(text) => (
            field(&text, "model name").unwrap_or("unknown").to_string(),
            identification(&text),
        ),
        Err(_) => ("unknown".to_string(), "unknown".to_string()),
    }
}

/// The identification of the CPU a `/proc/cpuinfo` text describes: the first processor's
/// `cpu family`, `model` and `stepping`, the number of logical CPUs (`processor` entries),
/// and the widest vector extension among its flags (`avx512f`, `avx2`, `avx`, `sse4_2`, or
/// none). Missing fields read "?".
pub fn identification(cpuinfo: &str) -> String {
    let value = |key| field(cpuinfo, key).unwrap_or("?");
    let logical = entries(cpuinfo).filter(|(k, _)| *k == "processor").count();
    let flags: Vec<&str> = field(cpuinfo, "flags")
        .map(|f| f.split_whitespace().collect())
        .unwrap_or_default();
    let simd = ["avx512f", "avx2", "avx", "sse4_2"]
        .into_iter()
        .find(|f| flags.contains(f))
        .unwrap_or("no AVX");
    format!(
        "family {} model {} stepping {}, {logical} logical CPUs, {simd}",
        value("cpu family"),
        value("model"),
        value("stepping"),
    )
}

/// The `key : value` lines of a `/proc/cpuinfo` text, both sides trimmed.
fn entries(cpuinfo: &str) -> impl Iterator<Item = (&str, &str)> {
    cpuinfo
        .lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim(), v.trim()))
}

/// The value of the first line whose key is `key`.
fn field<'a>(cpuinfo: &'a str, key: &str) -> Option<&'a str> {
    entries(cpuinfo).find(|(k, _)| *k == key).map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two processors of a KVM guest, as its `/proc/cpuinfo` lists them (abridged): "model"
    /// is not "model name", and the widest extension of the flags is named.
    #[test]
    fn a_kvm_guests_cpuinfo_is_identified() {
        let processor = |n: usize| {
            format!(
                "processor\t: {n}\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\n\
                 model name\t: AMD EPYC\nstepping\t: 1\nflags\t\t: fpu sse4_2 avx avx2 avx512f \
                 avx512dq\n\n"
            )
        };
        let text = processor(0) + &processor(1);
        assert_eq!(
            identification(&text),
            "family 26 model 2 stepping 1, 2 logical CPUs, avx512f"
        );
        assert_eq!(field(&text, "model name"), Some("AMD EPYC"));
        // Without AVX-512, the next widest; fields that are missing read "?".
        let older = "processor : 0\ncpu family : 6\nflags : sse4_2 avx avx2\n";
        assert_eq!(
            identification(older),
            "family 6 model ? stepping ?, 1 logical CPUs, avx2"
        );
        assert_eq!(
            identification(""),
            "family ? model ? stepping ?, 0 logical CPUs, no AVX"
        );
    }
}
