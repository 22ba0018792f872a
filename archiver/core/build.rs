//! Embeds the archive's migrations (the top-level `migrations/*.sql`, their one definition) in the core,
//! so that an installed wheel carries them without a folder of its own.

use std::{env, fs, path::PathBuf};

fn main() {
    let root = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap()).join("../../migrations");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut names: Vec<String> = fs::read_dir(&root)
        .map(|entries| {
            entries
                .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
                .filter(|name| name.ends_with(".sql"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut code = String::from("pub const MIGRATIONS: &[(&str, &str)] = &[\n");
    for name in &names {
        let path = root.join(name).canonicalize().unwrap();
        println!("cargo:rerun-if-changed={}", path.display());
        code += &format!(
            "    ({name:?}, include_str!({:?})),\n",
            path.display().to_string()
        );
    }
    code += "];\n";
    fs::write(
        PathBuf::from(env::var("OUT_DIR").unwrap()).join("migrations.rs"),
        code,
    )
    .unwrap();
}
