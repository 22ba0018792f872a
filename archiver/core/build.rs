//! Embeds the archive's migrations (the top-level `migrations/*.sql`, their one definition) and the user
//! documentation (`docs/*.md`, which `archiver docs TOPIC` prints) in the core, so that an installed wheel
//! carries them without folders of its own.

use std::{env, fs, path::PathBuf};

fn main() {
    let top = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap()).join("../..");
    let mut code = embedded(&top.join("migrations"), ".sql", "MIGRATIONS");
    code += &embedded(&top.join("docs"), ".md", "DOCS");
    fs::write(
        PathBuf::from(env::var("OUT_DIR").unwrap()).join("embedded.rs"),
        code,
    )
    .unwrap();
}

/// `pub const NAME: &[(&str, &str)]`: each file of `folder` ending in `suffix`, by name, in name order.
fn embedded(folder: &PathBuf, suffix: &str, name: &str) -> String {
    println!("cargo:rerun-if-changed={}", folder.display());
    let mut names: Vec<String> = fs::read_dir(folder)
        .map(|entries| {
            entries
                .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
                .filter(|file| file.ends_with(suffix))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut code = format!("pub const {name}: &[(&str, &str)] = &[\n");
    for file in &names {
        let path = folder.join(file).canonicalize().unwrap();
        println!("cargo:rerun-if-changed={}", path.display());
        code += &format!(
            "    ({file:?}, include_str!({:?})),\n",
            path.display().to_string()
        );
    }
    code + "];\n"
}
