//! The shape of the code, checked (issue 21): no module cycles, no long source
//! files, and only `wfs-core`'s `persistence` asks which database it runs on.
//!
//! # The module graph
//!
//! Every `src/**/*.rs` of the five crates (`wfs-core`, `wfs-tower`, `wfs-server`,
//! `wfs-client`, `examples/host`) is parsed with `syn`, module by module from each
//! crate root (`lib.rs`, and `main.rs` as a crate of its own), following `mod`
//! declarations and inline `mod` blocks. Every path that starts with `crate::`,
//! `super::` or `self::`, in a `use` item or anywhere in an expression, a type, a
//! pattern or an attribute's path, names an item of some module B, which is the
//! longest module path the path begins with (a re-export counts where it is
//! written: `crate::persistence::Qualified` names `persistence`). Paths inside macro
//! invocations and doc links are not read.
//!
//! A use from module A of an item in module B is an edge between the two children of
//! the lowest common ancestor of A and B that contain A and B: `service::job_roles`
//! using `crate::service::webhooks::PAGE_MAX` is the edge
//! `service::job_roles -> service::webhooks`, and `cache` using
//! `crate::persistence::changes::Topic` is `cache -> persistence`. A module using its
//! own ancestor or descendant is not an edge: a parent and its children are one unit.
//! A cycle is a strongly connected set of two or more modules in that graph; the test
//! fails with one cycle of each spelled out, `service::job_roles -> service::webhooks
//! -> service::job_roles`, and the places that make its edges.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// Longest a file under a crate's `src/` may be, in lines.
const MAX_LINES: usize = 600;

/// The crate roots read: (the crate's name in messages, its root file).
const CRATE_ROOTS: &[(&str, &str)] = &[
    ("wfs-core", "wfs-core/src/lib.rs"),
    ("wfs-tower", "wfs-tower/src/lib.rs"),
    ("wfs-server", "wfs-server/src/lib.rs"),
    ("wfs-server (bin)", "wfs-server/src/main.rs"),
    ("wfs-client", "wfs-client/src/lib.rs"),
    ("host", "examples/host/src/lib.rs"),
    ("host (bin)", "examples/host/src/main.rs"),
];

/// The `src/` directories whose files are measured and searched.
const SOURCE_DIRS: &[&str] = &[
    "wfs-core/src",
    "wfs-tower/src",
    "wfs-server/src",
    "wfs-client/src",
    "examples/host/src",
];

/// The only directory whose files may name the database backend.
const BACKEND_HOME: &str = "wfs-core/src/persistence/";

/// Names that ask which database the code runs on.
const BACKEND_NAMES: &[&str] = &["DatabaseBackend", "get_database_backend", "DbBackend"];

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A module path inside its crate, `[]` for the crate root.
type ModPath = Vec<String>;

fn spell(module: &[String]) -> String {
    if module.is_empty() {
        "crate".to_owned()
    } else {
        module.join("::")
    }
}

/// Where an edge comes from: one path that makes it, and its file.
#[derive(Debug, Clone)]
struct Place {
    file: String,
    path: String,
}

/// One crate's modules and the paths each one writes.
#[derive(Debug, Default)]
struct Crate {
    modules: BTreeSet<ModPath>,
    /// (the module writing it, the absolute path it names, where).
    uses: Vec<(ModPath, ModPath, Place)>,
    /// The directory file names in messages start from.
    shown_from: PathBuf,
}

impl Crate {
    /// The crate whose root file is `root`; files are named from `shown_from`.
    fn read(root: &Path, shown_from: &Path) -> Self {
        let mut krate = Self {
            shown_from: shown_from.to_path_buf(),
            ..Self::default()
        };
        krate.read_file(root, Vec::new(), root.parent().expect("src").to_path_buf());
        krate
    }

    /// Reads the file of `module`; its child modules' files are in `dir`.
    fn read_file(&mut self, file: &Path, module: ModPath, dir: PathBuf) {
        let text = std::fs::read_to_string(file)
            .unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
        let parsed =
            syn::parse_file(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", file.display()));
        let shown = file
            .strip_prefix(&self.shown_from)
            .unwrap_or(file)
            .to_string_lossy()
            .replace('\\', "/");
        self.modules.insert(module.clone());
        let mut reader = Reader {
            krate: self,
            file: shown,
            depth: module.len(),
            module,
            files: Vec::new(),
        };
        for item in &parsed.items {
            reader.visit_item(item);
        }
        let children = std::mem::take(&mut reader.files);
        for (child, within) in children {
            let name = child.last().expect("a child module").clone();
            let base = dir.join(within.iter().collect::<PathBuf>());
            let (path, child_dir) = if base.join(format!("{name}.rs")).exists() {
                (base.join(format!("{name}.rs")), base.join(&name))
            } else {
                (base.join(&name).join("mod.rs"), base.join(&name))
            };
            self.read_file(&path, child, child_dir);
        }
    }

    /// The module an absolute path names: the longest module path it begins with.
    fn module_of(&self, path: &[String]) -> ModPath {
        (0..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|prefix| self.modules.contains(prefix))
            .unwrap_or_default()
    }

    /// The edges (see the module docs), each with the places that make it.
    fn edges(&self) -> BTreeMap<(ModPath, ModPath), Vec<Place>> {
        let mut edges: BTreeMap<(ModPath, ModPath), Vec<Place>> = BTreeMap::new();
        for (from, path, place) in &self.uses {
            let to = self.module_of(path);
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common == from.len() || common == to.len() {
                continue; // the same module, an ancestor or a descendant
            }
            let key = (from[..=common].to_vec(), to[..=common].to_vec());
            edges.entry(key).or_default().push(place.clone());
        }
        edges
    }
}

/// Walks one file's items, noting its paths and its file modules.
struct Reader<'a> {
    krate: &'a mut Crate,
    file: String,
    module: ModPath,
    /// The depth of the module this file is (inline modules sit below it).
    depth: usize,
    /// File modules declared here: (their path, the directories from this file's
    /// child directory to theirs, for file modules inside inline modules).
    files: Vec<(ModPath, Vec<String>)>,
}

impl Reader<'_> {
    /// Notes a path written in the current module, when it starts at the crate,
    /// `self` or `super`.
    fn note(&mut self, segments: &[String]) {
        let Some(first) = segments.first() else {
            return;
        };
        let mut absolute = match first.as_str() {
            "crate" => Vec::new(),
            "self" | "super" => self.module.clone(),
            _ => return,
        };
        let mut rest = &segments[1..];
        if first == "super" {
            absolute.pop();
        }
        while rest.first().is_some_and(|s| s == "super") {
            absolute.pop();
            rest = &rest[1..];
        }
        absolute.extend(rest.iter().filter(|s| *s != "self").cloned());
        let place = Place {
            file: self.file.clone(),
            path: segments.join("::"),
        };
        self.krate.uses.push((self.module.clone(), absolute, place));
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                prefix.push(n.ident.to_string());
                self.note(&prefix.clone());
                prefix.pop();
            }
            syn::UseTree::Rename(r) => {
                prefix.push(r.ident.to_string());
                self.note(&prefix.clone());
                prefix.pop();
            }
            syn::UseTree::Glob(_) => self.note(&prefix.clone()),
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    self.use_tree(prefix, tree);
                }
            }
        }
    }
}

impl<'ast> Visit<'ast> for Reader<'_> {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &item.tree);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        self.note(&segments);
        syn::visit::visit_path(self, path);
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        let name = item.ident.to_string();
        self.module.push(name);
        match &item.content {
            Some((_, items)) => {
                self.krate.modules.insert(self.module.clone());
                for attr in &item.attrs {
                    self.visit_attribute(attr);
                }
                for item in items {
                    self.visit_item(item);
                }
            }
            None => {
                // Relative to this file's child directory: the inline modules between.
                let within = self.module[self.depth..self.module.len() - 1].to_vec();
                self.files.push((self.module.clone(), within));
            }
        }
        self.module.pop();
    }
}

/// The modules on cycles, as strongly connected sets of two or more (Tarjan's).
fn cycles(edges: &BTreeSet<(ModPath, ModPath)>) -> Vec<Vec<ModPath>> {
    struct Tarjan<'a> {
        next: BTreeMap<&'a ModPath, Vec<&'a ModPath>>,
        index: BTreeMap<&'a ModPath, usize>,
        low: BTreeMap<&'a ModPath, usize>,
        stack: Vec<&'a ModPath>,
        on_stack: BTreeSet<&'a ModPath>,
        found: Vec<Vec<ModPath>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, node: &'a ModPath) {
            let n = self.index.len();
            self.index.insert(node, n);
            self.low.insert(node, n);
            self.stack.push(node);
            self.on_stack.insert(node);
            for next in self.next.get(node).cloned().unwrap_or_default() {
                if !self.index.contains_key(next) {
                    self.visit(next);
                    let low = self.low[node].min(self.low[next]);
                    self.low.insert(node, low);
                } else if self.on_stack.contains(next) {
                    let low = self.low[node].min(self.index[next]);
                    self.low.insert(node, low);
                }
            }
            if self.low[node] == self.index[node] {
                let mut set = Vec::new();
                while let Some(top) = self.stack.pop() {
                    self.on_stack.remove(top);
                    set.push(top.clone());
                    if top == node {
                        break;
                    }
                }
                if set.len() > 1 {
                    set.sort();
                    self.found.push(set);
                }
            }
        }
    }
    let mut tarjan = Tarjan {
        next: BTreeMap::new(),
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for (from, to) in edges {
        tarjan.next.entry(from).or_default().push(to);
    }
    let nodes: Vec<&ModPath> = tarjan.next.keys().copied().collect();
    for node in nodes {
        if !tarjan.index.contains_key(node) {
            tarjan.visit(node);
        }
    }
    tarjan.found
}

/// The shortest way from `from` to another module `to` over `edges` (breadth
/// first), both ends included; `None` when there is none.
fn way(edges: &BTreeSet<(ModPath, ModPath)>, from: &ModPath, to: &ModPath) -> Option<Vec<ModPath>> {
    let mut came_from: BTreeMap<&ModPath, &ModPath> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([from]);
    while let Some(at) = queue.pop_front() {
        for (_, next) in edges.iter().filter(|(a, _)| a == at) {
            if next == from || came_from.contains_key(next) {
                continue;
            }
            came_from.insert(next, at);
            queue.push_back(next);
        }
    }
    came_from.get(to)?;
    let mut way = vec![to.clone()];
    let mut back = to;
    while back != from {
        back = came_from[back];
        way.push(back.clone());
    }
    way.reverse();
    Some(way)
}

/// What is wrong with one crate's module graph: each cycle spelled out with the
/// places of its edges.
fn cycle_report(name: &str, krate: &Crate) -> Vec<String> {
    let placed = krate.edges();
    let edges: BTreeSet<(ModPath, ModPath)> = placed.keys().cloned().collect();
    let mut problems = Vec::new();
    for set in cycles(&edges) {
        let start = &set[0];
        let (_, first) = edges
            .iter()
            .find(|(a, b)| a == start && set.contains(b))
            .expect("a node of a cycle has an edge within it");
        let mut ring = vec![start.clone()];
        ring.extend(way(&edges, first, start).expect("a way back within the cycle"));
        let mut text = format!(
            "{name}: module cycle {}",
            ring.iter()
                .map(|m| spell(m))
                .collect::<Vec<_>>()
                .join(" -> ")
        );
        for pair in ring.windows(2) {
            let places = &placed[&(pair[0].clone(), pair[1].clone())];
            let p = &places[0];
            let _ = write!(
                text,
                "\n    {} -> {}: {} `{}`{}",
                spell(&pair[0]),
                spell(&pair[1]),
                p.file,
                p.path,
                match places.len() {
                    1 => String::new(),
                    n => format!(" and {} more", n - 1),
                }
            );
        }
        problems.push(text);
    }
    problems
}

#[test]
fn no_module_cycles() {
    let mut problems = Vec::new();
    for (name, root) in CRATE_ROOTS {
        let krate = Crate::read(&workspace().join(root), &workspace());
        problems.extend(cycle_report(name, &krate));
    }
    assert!(problems.is_empty(), "\n{}\n", problems.join("\n"));
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// Every source file, as (its path from the workspace, its text).
fn sources() -> Vec<(String, String)> {
    SOURCE_DIRS
        .iter()
        .flat_map(|dir| rust_files(&workspace().join(dir)))
        .map(|file| {
            let text = std::fs::read_to_string(&file).expect("a source file");
            let shown = file
                .strip_prefix(workspace())
                .expect("inside the workspace")
                .to_string_lossy()
                .replace('\\', "/");
            (shown, text)
        })
        .collect()
}

#[test]
fn no_source_file_is_over_600_lines() {
    let long: BTreeMap<String, usize> = sources()
        .into_iter()
        .map(|(file, text)| (file, text.lines().count()))
        .filter(|(_, lines)| *lines > MAX_LINES)
        .collect();
    let problems: Vec<String> = long
        .iter()
        .map(|(file, lines)| format!("{file} has {lines} lines (at most {MAX_LINES})"))
        .collect();
    assert!(problems.is_empty(), "\n{}\n", problems.join("\n"));
}

#[test]
fn only_persistence_asks_which_database_it_runs_on() {
    let mut problems = Vec::new();
    for (file, text) in sources() {
        if file.starts_with(BACKEND_HOME) {
            continue;
        }
        for (n, line) in text.lines().enumerate() {
            for name in BACKEND_NAMES.iter().filter(|name| line.contains(**name)) {
                problems.push(format!("{file}:{}: names `{name}`", n + 1));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "only {BACKEND_HOME} may ask which database it runs on (give it a function \
         there):\n{}\n",
        problems.join("\n")
    );
}

/// The check itself: a two-module cycle in a crate written for the purpose is found
/// and spelled out, while a parent using its child is not an edge.
#[test]
fn the_cycle_check_spells_out_a_cycle() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let write = |path: &str, text: &str| {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("a directory");
        std::fs::write(path, text).expect("a file");
    };
    write(
        "lib.rs",
        "mod service;\nmod cache;\npub use cache::Cache;\n",
    );
    write(
        "service/mod.rs",
        "pub(crate) mod roles;\nmod hooks;\nuse self::roles::Role;\n",
    );
    write(
        "service/roles.rs",
        "pub struct Role;\nfn emit() { super::hooks::send(); }\n",
    );
    write(
        "service/hooks.rs",
        "use crate::service::roles::Role;\npub fn send() {}\nfn cached(_: crate::cache::Cache) {}\n",
    );
    write("cache.rs", "pub struct Cache;\n");
    let krate = Crate::read(&dir.path().join("lib.rs"), dir.path());
    assert_eq!(
        cycle_report("demo", &krate),
        [
            "demo: module cycle service::hooks -> service::roles -> service::hooks\n    \
             service::hooks -> service::roles: service/hooks.rs `crate::service::roles::Role`\n    \
             service::roles -> service::hooks: service/roles.rs `super::hooks::send`"
        ]
    );
    let edges: Vec<(String, String)> = krate
        .edges()
        .into_keys()
        .map(|(a, b)| (spell(&a), spell(&b)))
        .collect();
    assert_eq!(
        edges,
        [
            ("service".to_owned(), "cache".to_owned()),
            ("service::hooks".to_owned(), "service::roles".to_owned()),
            ("service::roles".to_owned(), "service::hooks".to_owned()),
        ]
    );
}

/// The recipes and the module map of `docs/architecture.md` name files that exist: a
/// file moved or split without its recipe fails here. A path from the workspace root
/// must exist as written; a shorter one (`handlers/mod.rs`) must end some source
/// file's path. The recipes' examples (a resource named breaks, a migration's
/// `mYYYYMMDD_...` name) are the only files named that do not exist.
#[test]
fn the_architecture_guide_names_only_files_that_exist() {
    let root = workspace();
    let guide = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let files: Vec<String> = ["wfs-core", "wfs-tower", "wfs-server", "wfs-client", "tests"]
        .iter()
        .flat_map(|dir| rust_files(&root.join(dir)))
        .map(|file| file.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    let mut missing = Vec::new();
    for named in guide.split('`').skip(1).step_by(2) {
        // The example resource, and the placeholder of a new migration's name.
        let example = named.contains("break") || named.contains("YYYY");
        if !named.ends_with(".rs") || named.contains(' ') || example {
            continue;
        }
        let exists = if root.join(named).is_file() {
            true
        } else {
            files
                .iter()
                .any(|file| file.ends_with(&format!("/{named}")))
        };
        if !exists {
            missing.push(named.to_owned());
        }
    }
    assert!(
        missing.is_empty(),
        "docs/architecture.md names files that do not exist: {missing:?}"
    );
}
