import { compareCodePoints, formatFixed } from "@envace/python-text";
import { compare } from "../../py/ops.js";
import { pyRepr } from "../../py/repr.js";
import { codePointLength, rstrip, splitlines, splitWhitespace, strip } from "../../py/strings.js";
import { hashKey, PyDict, PyError, pyEquals, PyOpaque, truthy, typeError, typeName } from "../../py/value.js";
import type { Py } from "../../py/value.js";
import { BfclEnvironment } from "../environment.js";
import { contains } from "../../py/containers.js";
import { asStr, dictGet, item, iter, noAttribute } from "../python-access.js";

class FsFile {
  constructor(
    public name: string,
    public content: Py = "",
  ) {}
}

class FsDirectory {
  contents = new Map<string, FsNode>();
  constructor(
    public name: string,
    public parent: FsDirectory | null = null,
  ) {}

  has(name: Py): boolean {
    if (typeof name === "string") return this.contents.has(name);
    hashKey(name);
    return false;
  }

  get(name: Py): FsNode | undefined {
    if (name === ".") return this;
    return typeof name === "string" ? this.contents.get(name) : undefined;
  }

  addFile(name: string, content: Py = ""): void {
    if (this.contents.has(name)) throw new PyError("ValueError", `File '${name}' already exists in directory '${this.name}'.`);
    this.contents.set(name, new FsFile(name, content));
  }

  addDirectory(name: string): void {
    if (this.contents.has(name)) throw new PyError("ValueError", `Directory '${name}' already exists in directory '${this.name}'.`);
    this.contents.set(name, new FsDirectory(name, this));
  }
}

type FsNode = FsFile | FsDirectory;

function nodesEqual(a: FsNode, b: FsNode): boolean {
  if (a instanceof FsFile) return b instanceof FsFile && a.name === b.name && pyEquals(a.content, b.content);
  if (!(b instanceof FsDirectory) || a.name !== b.name || a.contents.size !== b.contents.size) return false;
  for (const [name, node] of a.contents) {
    const other = b.contents.get(name);
    if (other === undefined || !nodesEqual(node, other)) return false;
  }
  return true;
}


function nodeRepr(node: FsNode): string {
  if (node instanceof FsFile) return `<<File: ${node.name}, Content: ${typeof node.content === "string" ? node.content : pyRepr(node.content)}>>`;
  const contents = [...node.contents].map(([name, child]) => `${pyRepr(name)}: ${nodeRepr(child)}`).join(", ");
  return `<Directory: ${node.name}, Parent: ${node.parent ? node.parent.name : "None"}, Contents: {${contents}}>`;
}

/** Upstream's name check: none of `|/\\?%*:"><` may occur in it (by Python's `in`, so any container passes through). */
function isValidName(name: Py): boolean {
  return !Array.from('|/\\?%*:"><').some((c) => contains(name, c));
}

/** A name as a directory key: only strings are supported (lists and dicts fail as unhashable, as upstream's lookups do). */
function nameKey(name: Py): string {
  if (typeof name === "string") return name;
  hashKey(name);
  throw typeError(`file and directory names must be strings, not '${typeName(name)}'`);
}

/** A small in-memory file system the agent navigates with shell-like commands (upstream `GorillaFileSystem`). */
export class GorillaFileSystem extends BfclEnvironment {
  readonly className = "GorillaFileSystem";
  private root = new FsDirectory("/");
  private current = this.root;
  private longContext = false;

  override load(config: PyDict, longContext: boolean): void {
    this.longContext = longContext;
    this.root = new FsDirectory("/");
    if (config.has("root")) {
      const scenarioRoot = config.get("root")!;
      const rootName = iter(scenarioRoot)[0]!;
      const root = new FsDirectory(asStr(rootName, "name"));
      this.root = this.loadDirectory(item(item(scenarioRoot, rootName), "contents"), root);
    }
    this.current = this.root;
  }

  private loadDirectory(current: Py, parent: FsDirectory): FsDirectory {
    let bottommost = true;
    if (!(current instanceof PyDict)) throw noAttribute(current, "items");
    for (const [name, data] of current) {
      const key = asStr(name, "name");
      const type = item(data, "type");
      if (type === "directory") {
        bottommost = false;
        parent.contents.set(key, this.loadDirectory(item(data, "contents"), new FsDirectory(key, parent)));
      } else if (type === "file") {
        let content = item(data, "content");
        if (this.longContext && !(iter(this.filler("FILES_TAIL_USED"))).includes(key)) {
          content = asStr(content, "__add__") + asStr(this.filler("FILE_CONTENT_EXTENSION"), "__add__");
        }
        parent.contents.set(key, new FsFile(key, content));
      }
    }
    if (bottommost && this.longContext) {
      for (const name of iter(this.filler("POPULATE_FILE_EXTENSION"))) parent.addFile(asStr(name, "name"));
    }
    return parent;
  }

  override publicState(): Map<string, Py> {
    const root = this.root;
    const snapshot = new PyOpaque("Directory", () => nodeRepr(root), (other) => {
      const theirs = other instanceof PyOpaque ? DIRECTORIES.get(other) : undefined;
      return theirs !== undefined && nodesEqual(root, theirs);
    });
    DIRECTORIES.set(snapshot, root);
    return new Map<string, Py>([
      ["long_context", this.longContext],
      ["root", snapshot],
    ]);
  }

  constructor(...args: ConstructorParameters<typeof BfclEnvironment>) {
    super(...args);
    this.define("pwd", [], () => this.pwd());
    this.define("ls", [{ name: "a", default: false }], (a) => this.ls(a));
    this.define("cd", ["folder"], (folder) => this.cd(folder));
    this.define("mkdir", ["dir_name"], (name) => this.mkdir(name));
    this.define("touch", ["file_name"], (name) => this.touch(name));
    this.define("echo", ["content", { name: "file_name", default: null }], (content, name) => this.echo(content, name));
    this.define("cat", ["file_name"], (name) => this.cat(name));
    this.define("find", [{ name: "path", default: "." }, { name: "name", default: null }], (path, name) => this.find(path, name));
    this.define("wc", ["file_name", { name: "mode", default: "l" }], (name, mode) => this.wc(name, mode));
    this.define("sort", ["file_name"], (name) => this.sort(name));
    this.define("grep", ["file_name", "pattern"], (name, pattern) => this.grep(name, pattern));
    this.define("du", [{ name: "human_readable", default: false }], (human) => this.du(human));
    this.define("tail", ["file_name", { name: "lines", default: 10 }], (name, lines) => this.tail(name, lines));
    this.define("diff", ["file_name1", "file_name2"], (a, b) => this.diff(a, b));
    this.define("mv", ["source", "destination"], (source, destination) => this.mv(source, destination));
    this.define("rm", ["file_name"], (name) => this.rm(name));
    this.define("rmdir", ["dir_name"], (name) => this.rmdir(name));
    this.define("cp", ["source", "destination"], (source, destination) => this.cp(source, destination));
  }

  private pwd(): Py {
    const path: string[] = [];
    for (let dir: FsDirectory | null = this.current; dir !== null; dir = dir.parent) path.push(dir.name);
    return PyDict.of({ current_working_directory: `/${path.reverse().join("/")}` });
  }

  private ls(a: Py): Py {
    let contents = [...this.current.contents.keys()];
    if (!truthy(a)) contents = contents.filter((name) => !name.startsWith("."));
    return PyDict.of({ current_directory_content: contents });
  }

  private cd(folderArg: Py): Py {
    let folder = rstrip(asStr(folderArg, "rstrip"), "/");
    if (folder === "") folder = "/";
    if (![".", "..", "/"].includes(folder) && folder.includes("/")) {
      return PyDict.of({ error: `cd: ${folder}: Unsupported path. Only one folder level at a time is supported.` });
    }
    if (folder === "..") {
      if (this.current.parent) this.current = this.current.parent;
      else if (this.root === this.current) return PyDict.of({ error: "Current directory is already the root. Cannot go back." });
      else return PyDict.of({ error: "cd: ..: No such directory" });
      return new PyDict();
    }
    const target = this.navigate(folder);
    if (target instanceof PyDict) return target;
    this.current = target;
    return PyDict.of({ current_working_directory: target.name });
  }

  private mkdir(name: Py): Py {
    if (!isValidName(name)) return PyDict.of({ error: `mkdir: cannot create directory '${pyStrOf(name)}': Invalid character` });
    if (this.current.has(name)) return PyDict.of({ error: `mkdir: cannot create directory '${pyStrOf(name)}': File exists` });
    this.current.addDirectory(nameKey(name));
    return null;
  }

  private touch(name: Py): Py {
    if (!isValidName(name)) return PyDict.of({ error: `touch: cannot touch '${pyStrOf(name)}': Invalid character` });
    if (this.current.has(name)) return PyDict.of({ error: `touch: cannot touch '${pyStrOf(name)}': File exists` });
    this.current.addFile(nameKey(name));
    return null;
  }

  private echo(content: Py, name: Py): Py {
    if (name === null) return PyDict.of({ terminal_output: content });
    if (!isValidName(name)) return PyDict.of({ error: `echo: cannot write to '${pyStrOf(name)}': Invalid character` });
    if (!truthy(name)) return PyDict.of({ terminal_output: content });
    if (!this.current.has(name)) return PyDict.of({ error: `echo: cannot write to '${pyStrOf(name)}': No such file` });
    const node = this.current.get(name)!;
    if (!(node instanceof FsFile)) throw new PyError("AttributeError", "'Directory' object has no attribute '_write'");
    node.content = content;
    return null;
  }

  private cat(name: Py): Py {
    if (!isValidName(name)) return PyDict.of({ error: `cat: '${pyStrOf(name)}': Invalid character` });
    if (!this.current.has(name)) return PyDict.of({ error: `cat: '${pyStrOf(name)}': No such file or directory` });
    const node = this.current.get(name)!;
    if (node instanceof FsFile) return PyDict.of({ file_content: node.content });
    return PyDict.of({ error: `cat: '${pyStrOf(name)}': Is a directory` });
  }

  private find(path: Py, name: Py): Py {
    const target = this.navigate(path);
    if (target instanceof PyDict) {
      const message = dictGet(target, "error", "");
      if (typeof message === "string" && message.startsWith("cd:")) return PyDict.of({ error: message.replace("cd:", "find:") });
      return target;
    }
    const matches: string[] = [];
    const search = (directory: FsDirectory, base: string): void => {
      for (const [itemName, node] of directory.contents) {
        const itemPath = `${base}/${itemName}`;
        if (name === null || itemName.includes(asSubstring(name))) matches.push(itemPath);
        if (node instanceof FsDirectory) search(node, itemPath);
      }
    };
    search(target, rstrip(asStr(path, "rstrip"), "/"));
    return PyDict.of({ matches });
  }

  private wc(name: Py, mode: Py): Py {
    if (!["l", "w", "c"].includes(mode as string)) return PyDict.of({ error: `wc: invalid mode '${pyStrOf(mode)}'` });
    const node = this.current.has(name) ? this.current.get(name) : undefined;
    if (node instanceof FsFile) {
      const content = node.content;
      if (mode === "l") return PyDict.of({ count: splitlines(asStr(content, "splitlines")).length, type: "lines" });
      if (mode === "w") return PyDict.of({ count: splitWhitespace(asStr(content, "split")).length, type: "words" });
      return PyDict.of({ count: lenOf(content), type: "characters" });
    }
    return PyDict.of({ error: `wc: ${pyStrOf(name)}: No such file or directory` });
  }

  private sort(name: Py): Py {
    const node = this.current.has(name) ? this.current.get(name) : undefined;
    if (node instanceof FsFile) {
      const lines = splitlines(asStr(node.content, "splitlines")).sort(compareCodePoints);
      return PyDict.of({ sorted_content: lines.join("\n") });
    }
    return PyDict.of({ error: `sort: ${pyStrOf(name)}: No such file or directory` });
  }

  private grep(name: Py, pattern: Py): Py {
    const node = this.current.has(name) ? this.current.get(name) : undefined;
    if (node instanceof FsFile) {
      const lines = splitlines(asStr(node.content, "splitlines"));
      return PyDict.of({ matching_lines: lines.filter((line) => line.includes(asSubstring(pattern))) });
    }
    return PyDict.of({ error: `grep: ${pyStrOf(name)}: No such file or directory` });
  }

  private du(human: Py): Py {
    const size = (node: FsNode): number => {
      if (node instanceof FsFile) return Buffer.byteLength(asStr(node.content, "encode"), "utf8");
      let total = 0;
      for (const child of node.contents.values()) total += size(child);
      return total;
    };
    let total = size(this.current);
    if (!truthy(human)) return PyDict.of({ disk_usage: `${total} bytes` });
    for (const unit of ["B", "KB", "MB", "GB", "TB"]) {
      if (total < 1024) return PyDict.of({ disk_usage: `${formatFixed(total, 2)} ${unit}` });
      total /= 1024;
    }
    return PyDict.of({ disk_usage: `${formatFixed(total, 2)} PB` });
  }

  private tail(name: Py, lines: Py): Py {
    const node = this.current.has(name) ? this.current.get(name) : undefined;
    if (node instanceof FsFile) {
      const content = splitlines(asStr(node.content, "splitlines"));
      let count = lines;
      if (compare(">", count, content.length)) count = content.length;
      if (typeof count === "boolean") count = count ? 1 : 0;
      if (typeof count !== "number") throw typeError("slice indices must be integers or None or have an __index__ method");
      const start = -count < 0 ? Math.max(content.length - count, 0) : Math.min(-count, content.length);
      return PyDict.of({ last_lines: content.slice(start).join("\n") });
    }
    return PyDict.of({ error: `tail: ${pyStrOf(name)}: No such file or directory` });
  }

  private diff(first: Py, second: Py): Py {
    if (this.current.has(first) && this.current.has(second)) {
      const a = this.current.get(first);
      const b = this.current.get(second);
      if (a instanceof FsFile && b instanceof FsFile) {
        const left = splitlines(asStr(a.content, "splitlines"));
        const right = splitlines(asStr(b.content, "splitlines"));
        const lines: string[] = [];
        for (let i = 0; i < Math.min(left.length, right.length); i++) {
          if (left[i] !== right[i]) lines.push(`- ${left[i]}\n+ ${right[i]}`);
        }
        return PyDict.of({ diff_lines: lines.join("\n") });
      }
    }
    return PyDict.of({ error: `diff: ${pyStrOf(first)} or ${pyStrOf(second)}: No such file or directory` });
  }

  private mv(source: Py, destination: Py): Py {
    if (!this.current.has(source)) return PyDict.of({ error: `mv: cannot move '${pyStrOf(source)}': No such file or directory` });
    const node = this.current.get(source)!;
    const src = source as string;
    if (contains(destination, "/")) return PyDict.of({ error: "mv: path not allowed in destination. Provide only a file or directory name." });
    if (this.current.has(destination)) {
      const dest = destination as string;
      const target = this.current.get(dest)!;
      if (!(target instanceof FsDirectory)) return PyDict.of({ error: `mv: cannot move '${src}' to '${dest}': Not a directory` });
      if (target.contents.has(src)) return PyDict.of({ error: `mv: cannot move '${src}' to '${dest}/${src}': File exists` });
      this.current.contents.delete(src);
      this.place(target, src, node, false);
      return PyDict.of({ result: `'${src}' moved to '${dest}/${src}'` });
    }
    const dest = nameKey(destination);
    this.current.contents.delete(src);
    this.place(this.current, dest, node, false);
    return PyDict.of({ result: `'${src}' moved to '${dest}'` });
  }

  /** Put a file or directory under `parent` as upstream does: a new node, whose directory contents are shared or shallow-copied. */
  private place(parent: FsDirectory, name: string, node: FsNode, copyContents: boolean): void {
    if (node instanceof FsFile) {
      parent.addFile(name, node.content);
      return;
    }
    parent.addDirectory(name);
    (parent.contents.get(name) as FsDirectory).contents = copyContents ? new Map(node.contents) : node.contents;
  }

  private rm(name: Py): Py {
    if (!this.current.has(name)) return PyDict.of({ error: `rm: cannot remove '${pyStrOf(name)}': No such file or directory` });
    this.current.contents.delete(name as string);
    return PyDict.of({ result: `'${pyStrOf(name)}' removed` });
  }

  private rmdir(name: Py): Py {
    if (!this.current.has(name)) return PyDict.of({ error: `rmdir: cannot remove '${pyStrOf(name)}': No such file or directory` });
    const node = this.current.get(name)!;
    if (!(node instanceof FsDirectory)) return PyDict.of({ error: `rmdir: cannot remove '${pyStrOf(name)}': Not a directory` });
    if (node.contents.size > 0) return PyDict.of({ error: `rmdir: cannot remove '${pyStrOf(name)}': Directory not empty` });
    this.current.contents.delete(name as string);
    return PyDict.of({ result: `'${pyStrOf(name)}' removed` });
  }

  private cp(source: Py, destination: Py): Py {
    if (!this.current.has(source)) return PyDict.of({ error: `cp: cannot copy '${pyStrOf(source)}': No such file or directory` });
    const node = this.current.get(source)!;
    const src = source as string;
    if (contains(destination, "/")) return PyDict.of({ error: "cp: path not allowed in destination. Provide only a file or directory name." });
    if (this.current.has(destination)) {
      const dest = destination as string;
      const target = this.current.get(dest)!;
      if (!(target instanceof FsDirectory)) return PyDict.of({ error: `cp: cannot copy '${src}' to '${dest}': Not a directory` });
      // Upstream looks for "dest/src" among the directory's entries, which never holds a slash.
      this.place(target, src, node, true);
      return PyDict.of({ result: `'${src}' copied to '${dest}/${src}'` });
    }
    const dest = nameKey(destination);
    this.place(this.current, dest, node, true);
    return PyDict.of({ result: `'${src}' copied to '${dest}'` });
  }

  private navigate(pathArg: Py): FsDirectory | PyDict {
    if (pathArg === null || pathArg === ".") return this.current;
    if (pathArg === "/") return this.root;
    const path = asStr(pathArg, "strip");
    let dir = path.startsWith("/") ? this.root : this.current;
    for (const name of strip(path, "/").split("/")) {
      const next = dir.get(name);
      if (!(next instanceof FsDirectory)) return PyDict.of({ error: `cd: '${path}': No such file or directory` });
      dir = next;
    }
    return dir;
  }
}

/** The directory tree behind each state snapshot, so two snapshots compare as upstream's `Directory.__eq__`. */
const DIRECTORIES = new WeakMap<PyOpaque, FsDirectory>();

function pyStrOf(value: Py): string {
  return typeof value === "string" ? value : pyRepr(value);
}

function asSubstring(value: Py): string {
  if (typeof value === "string") return value;
  throw typeError(`'in <string>' requires string as left operand, not ${typeName(value)}`);
}

function lenOf(value: Py): number {
  if (typeof value === "string") return codePointLength(value);
  throw typeError(`object of type '${typeName(value)}' has no len()`);
}
