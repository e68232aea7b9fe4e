//! Arranges the header cbindgen generates into sections, the way `zstd.h`
//! reads: versions; status codes and messages; element types; the handle
//! (create, free, inspect); validation; lookup; assembly; conversion; text
//! files (Matrix Market and FROSTT); shards; Hurray files; descriptors and
//! statistics (`SECTIONS` below, in that order). Each section holds its
//! types, then its constants, then its functions, in the order cbindgen
//! wrote them. An item that no section claims stops the build: a new export
//! must be given its place here.

/// (title, what the section is for, does it claim this item name).
type Section = (&'static str, &'static str, fn(&str) -> bool);

const SECTIONS: &[Section] = &[
    (
        "Versions",
        "Compare HURRAY_COO_ABI_VERSION with hurray_coo_abi_version() at startup.",
        |n| {
            n.starts_with("HURRAY_COO_VERSION_")
                || n == "HURRAY_COO_ABI_VERSION"
                || matches!(
                    n,
                    "hurray_coo_version_number"
                        | "hurray_coo_version_string"
                        | "hurray_coo_abi_version"
                )
        },
    ),
    (
        "Status codes and messages",
        "Every fallible function returns one of these; the thread's last message and position say where.",
        |n| {
            n == "hurray_status"
                || n == "HURRAY_OK"
                || n.starts_with("HURRAY_ERR_")
                || n.starts_with("HURRAY_POS_")
                || matches!(
                    n,
                    "hurray_status_name"
                        | "hurray_last_error_message"
                        | "hurray_error_position"
                        | "hurray_last_error_position"
                )
        },
    ),
    (
        "Element types",
        "The format's type tags, and what the library knows of each.",
        |n| n.starts_with("HURRAY_TYPE_") || n.starts_with("hurray_type_"),
    ),
    (
        "The handle: create, free, inspect",
        "A hurray_coo holds one COO tensor over borrowed or copied buffers.",
        |n| {
            matches!(
                n,
                "hurray_coo"
                    | "hurray_release_fn"
                    | "HURRAY_COO_BORROW"
                    | "HURRAY_COO_COPY"
                    | "HURRAY_COO_PERMISSIVE"
                    | "HURRAY_COO_INDEX"
                    | "HURRAY_COO_ONE_BASED_MESSAGES"
                    | "HURRAY_COO_INDEX_VALUES"
                    | "HURRAY_MAX_THREADS"
                    | "HURRAY_MAX_RANK"
                    | "hurray_coo_parts"
                    | "hurray_coo_options"
                    | "hurray_coo_create"
                    | "hurray_coo_free"
                    | "hurray_coo_rank"
                    | "hurray_coo_shape"
                    | "hurray_coo_nnz"
                    | "hurray_coo_type_tag"
                    | "hurray_coo_is_sorted"
                    | "hurray_coo_flags"
                    | "hurray_coo_index_bytes"
                    | "hurray_coo_values"
                    | "hurray_coo_indices"
            )
        },
    ),
    (
        "Validation",
        "Every rule of the specification, whatever flags the handle was made with; the work space the checks keep.",
        |n| n == "hurray_coo_validate" || n == "hurray_release_scratch",
    ),
    ("Lookup", "One element, or many in one call.", |n| {
        n.starts_with("HURRAY_LOOKUP_")
            || n == "hurray_lookup_view"
            || n.starts_with("hurray_coo_lookup")
    }),
    (
        "Assembly",
        "Any triplets into a canonical handle; new values through a plan.",
        |n| {
            n.starts_with("HURRAY_INDEX_")
                || n.starts_with("HURRAY_DUP_")
                || n.starts_with("HURRAY_ASSEMBLE_")
                || n == "HURRAY_PATTERN"
                || n == "hurray_triplets"
                || n == "hurray_assemble_options"
                || n == "hurray_coo_assemble"
                || n.starts_with("hurray_assembly_plan")
        },
    ),
    (
        "Conversion",
        "CSR, CSC and dense arrays in the consumer's own format, and back; triplets straight into CSR or CSC.",
        |n| {
            n.starts_with("HURRAY_FORMAT_")
                || matches!(
                    n,
                    "hurray_compressed"
                        | "hurray_coo_compressed_size"
                        | "hurray_coo_export_compressed"
                        | "hurray_coo_dense_size"
                        | "hurray_coo_export_dense"
                        | "hurray_coo_from_compressed"
                        | "hurray_assemble_compressed"
                        | "hurray_coo_sort_modes"
                )
        },
    ),
    (
        "Text files: Matrix Market and FROSTT",
        "Read .mtx and .tns files, gzip-compressed or not (path, memory or a read callback), into a canonical handle or a .mtx file straight into CSR or CSC; write a handle as text.",
        |n| {
            n.starts_with("HURRAY_MTX_")
                || n.starts_with("HURRAY_TEXT_")
                || n == "hurray_text_options"
                || n == "hurray_read_fn"
                || n.starts_with("hurray_coo_read_")
                || n.starts_with("hurray_read_mtx_compressed")
                || n.starts_with("hurray_coo_write_")
        },
    ),
    (
        "Shards",
        "A tensor as the block of a larger parent: global coordinates, partition by rows, concatenation.",
        |n| {
            n.starts_with("HURRAY_PARTITION_")
                || matches!(
                    n,
                    "hurray_coo_to_local"
                        | "hurray_coo_lookup_global_f64"
                        | "hurray_coo_partition"
                        | "hurray_coo_concat"
                )
        },
    ),
    (
        "Hurray files",
        "Open a .hrry file (mapped), list its tensors and metadata, get zero-copy handles; write files.",
        |n| {
            n.starts_with("HURRAY_FILE_")
                || n.starts_with("HURRAY_KV_")
                || n.starts_with("hurray_file")
                || n == "hurray_kv"
        },
    ),
    (
        "Descriptors and statistics",
        "The Hurray descriptor: write one for a handle, read one into a handle.",
        |n| {
            n.starts_with("HURRAY_DESCRIPTOR_")
                || n.starts_with("HURRAY_STAT_")
                || matches!(
                    n,
                    "hurray_statistics"
                        | "hurray_descriptor_info"
                        | "hurray_coo_descriptor_size"
                        | "hurray_coo_encode_descriptor"
                        | "hurray_coo_from_descriptor"
                        | "hurray_descriptor_inspect"
                        | "hurray_coo_statistics"
                        | "hurray_coo_descriptor_statistics"
                        | "hurray_coo_shard"
                        | "hurray_coo_descriptor_flags"
                )
        },
    ),
];

#[derive(PartialEq, PartialOrd, Clone, Copy)]
enum Kind {
    Type,
    Constant,
    Function,
}

/// The declaration an item (doc comment + code, no blank line) makes.
fn classify(item: &str) -> Option<(Kind, String)> {
    let code: Vec<&str> = item
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            !(t.starts_with("/*") || t.starts_with('*') || t.starts_with("//"))
        })
        .collect();
    let first = *code.first()?;
    let last = *code.last()?;
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    if let Some(rest) = first.strip_prefix("#define ") {
        return Some((Kind::Constant, ident(rest)));
    }
    if first.starts_with("typedef") {
        let name = if let Some(at) = first.find("(*") {
            ident(&first[at + 2..])
        } else {
            let l = last.trim_end_matches(';');
            ident(l.rsplit([' ', '}']).next().unwrap_or(""))
        };
        return Some((Kind::Type, name));
    }
    let open = first.find('(')?;
    let name = first[..open].rsplit([' ', '*']).next().unwrap_or("");
    Some((Kind::Function, name.to_owned()))
}

/// The header, its items regrouped into sections inside one extern "C".
pub fn arrange(header: &str) -> String {
    let body_start = header.find("\n\n/**").expect("no item after the includes") + 2;
    let (prologue, rest) = header.split_at(body_start);
    let end = rest.rfind("\n#endif").expect("no include guard end");
    let epilogue = &rest[end + 1..];
    let mut sorted: Vec<Vec<(Kind, String)>> = vec![Vec::new(); SECTIONS.len()];
    for item in rest[..end].split("\n\n") {
        let item = item.trim_matches('\n');
        if item.is_empty() || item.starts_with("#ifdef __cplusplus") || item.starts_with('}') {
            continue;
        }
        let item = item
            .trim_start_matches("#ifdef __cplusplus\nextern \"C\" {\n#endif // __cplusplus\n")
            .trim_start_matches('\n');
        let (kind, name) =
            classify(item).unwrap_or_else(|| panic!("cannot read this header item:\n{item}"));
        let at = SECTIONS
            .iter()
            .position(|(_, _, claims)| claims(&name))
            .unwrap_or_else(|| {
                panic!("{name} is in no header section: add it to build/sections.rs")
            });
        sorted[at].push((kind, item.to_owned()));
    }
    let mut out = String::from(prologue);
    out.push_str("#ifdef __cplusplus\nextern \"C\" {\n#endif\n");
    for (k, ((title, about, _), items)) in SECTIONS.iter().zip(&mut sorted).enumerate() {
        assert!(!items.is_empty(), "header section {title} is empty");
        items.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
        out.push_str(&format!(
            "\n/* {bar}\n * {n}. {title}\n *    {about}\n * {bar} */\n",
            bar = "=".repeat(70),
            n = k + 1
        ));
        for (_, item) in items.iter() {
            out.push('\n');
            out.push_str(item);
            out.push('\n');
        }
    }
    out.push_str("\n#ifdef __cplusplus\n}  /* extern \"C\" */\n#endif\n\n");
    out.push_str(epilogue);
    out
}
