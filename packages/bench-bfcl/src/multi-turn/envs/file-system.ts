import {
  attributeError,
  compareCodePoints,
  formatFixed,
  hashKey,
  iterate,
  len,
  operator,
  pyEquals,
  PyHashDict,
  type PyObject,
  PyOpaque,
  pyRepr,
  pyStr,
  pyTypeName,
  rstrip,
  splitlines,
  splitWhitespace,
  strip,
  truthy,
  typeError,
  valueError,
} from "@envace/python-text";
import { BfclEnvironment } from "../environment.js";
import { asStr, dictGet, noAttribute } from "../python-access.js";

class FsFile {
  constructor(
    public name: string,
    public content: PyObject = "",
  ) {}
}

class FsDirectory {
  contents = new Map<string, FsNode>();
  constructor(
    public name: string,
    public parent: FsDirectory | null = null,
  ) {}

  has(name: PyObject): boolean {
    if (typeof name === "string") return this.contents.has(name);
    hashKey(name);
    return false;
  }

  get(name: PyObject): FsNode | undefined {
    if (name === ".") return this;
    return typeof name === "string" ? this.contents.get(name) : undefined;
  }

  addFile(name: string, content: PyObject = ""): void {
    if (this.contents.has(name)) throw valueError(`File '${name}' already exists in directory '${this.name}'.`);
    this.contents.set(name, new FsFile(name, content));
  }

  addDirectory(name: string): void {
    if (this.contents.has(name)) throw valueError(`Directory '${name}' already exists in directory '${this.name}'.`);
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
  if (node instanceof FsFile) return `<<File: ${node.name}, Content: ${pyStr(node.content)}>>`;
  const contents = [...node.contents].map(([name, child]) => `${pyRepr(name)}: ${nodeRepr(child)}`).join(", ");
  return `<Directory: ${node.name}, Parent: ${node.parent ? node.parent.name : "None"}, Contents: {${contents}}>`;
}

/** Upstream's name check: none of `|/\\?%*:"><` may occur in it (by Python's `in`, so any container passes through). */
function isValidName(name: PyObject): boolean {
  return !Array.from('|/\\?%*:"><').some((c) => operator.contains(name, c));
}

/** A name as a directory key: only strings are supported (lists and dicts fail as unhashable, as upstream's lookups do). */
function nameKey(name: PyObject): string {
  if (typeof name === "string") return name;
  hashKey(name);
  throw typeError(`file and directory names must be strings, not '${pyTypeName(name)}'`);
}

/** `mv` and `cp` check and answer alike; a move takes the entry from under its old name. */
const TRANSFERS = {
  mv: { verb: "move", done: "moved", move: true },
  cp: { verb: "copy", done: "copied", move: false },
} as const;

/** A small in-memory file system the agent navigates with shell-like commands (upstream `GorillaFileSystem`). */
export class GorillaFileSystem extends BfclEnvironment {
  readonly className = "GorillaFileSystem";
  private root = new FsDirectory("/");
  private current = this.root;
  private longContext = false;

  override load(config: PyHashDict, longContext: boolean): void {
    this.longContext = longContext;
    this.root = new FsDirectory("/");
    if (config.has("root")) {
      const scenarioRoot = config.get("root")!;
      const rootName = iterate(scenarioRoot)[0]!;
      const root = new FsDirectory(asStr(rootName, "name"));
      this.root = this.loadDirectory(operator.getitem(operator.getitem(scenarioRoot, rootName), "contents"), root);
    }
    this.current = this.root;
  }

  private loadDirectory(current: PyObject, parent: FsDirectory): FsDirectory {
    let bottommost = true;
    if (!(current instanceof PyHashDict)) throw noAttribute(current, "items");
    for (const [name, data] of current) {
      const key = asStr(name, "name");
      const type = operator.getitem(data, "type");
      if (type === "directory") {
        bottommost = false;
        parent.contents.set(key, this.loadDirectory(operator.getitem(data, "contents"), new FsDirectory(key, parent)));
      } else if (type === "file") {
        let content = operator.getitem(data, "content");
        if (this.longContext && !iterate(this.filler("FILES_TAIL_USED")).includes(key)) {
          content = asStr(content, "__add__") + asStr(this.filler("FILE_CONTENT_EXTENSION"), "__add__");
        }
        parent.contents.set(key, new FsFile(key, content));
      }
    }
    if (bottommost && this.longContext) {
      for (const name of iterate(this.filler("POPULATE_FILE_EXTENSION"))) parent.addFile(asStr(name, "name"));
    }
    return parent;
  }

  override publicState(): Map<string, PyObject> {
    const root = this.root;
    const snapshot = new PyOpaque(
      "Directory",
      () => nodeRepr(root),
      (other) => {
        const theirs = other instanceof PyOpaque ? DIRECTORIES.get(other) : undefined;
        return theirs !== undefined && nodesEqual(root, theirs);
      },
    );
    DIRECTORIES.set(snapshot, root);
    return new Map<string, PyObject>([
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
    this.define(
      "find",
      [
        { name: "path", default: "." },
        { name: "name", default: null },
      ],
      (path, name) => this.find(path, name),
    );
    this.define("wc", ["file_name", { name: "mode", default: "l" }], (name, mode) => this.wc(name, mode));
    this.define("sort", ["file_name"], (name) => this.sort(name));
    this.define("grep", ["file_name", "pattern"], (name, pattern) => this.grep(name, pattern));
    this.define("du", [{ name: "human_readable", default: false }], (human) => this.du(human));
    this.define("tail", ["file_name", { name: "lines", default: 10n }], (name, lines) => this.tail(name, lines));
    this.define("diff", ["file_name1", "file_name2"], (a, b) => this.diff(a, b));
    this.define("mv", ["source", "destination"], (source, destination) => this.transfer("mv", source, destination));
    this.define("rm", ["file_name"], (name) => this.rm(name));
    this.define("rmdir", ["dir_name"], (name) => this.rmdir(name));
    this.define("cp", ["source", "destination"], (source, destination) => this.transfer("cp", source, destination));
  }

  private pwd(): PyObject {
    const path: string[] = [];
    for (let dir: FsDirectory | null = this.current; dir !== null; dir = dir.parent) path.push(dir.name);
    return PyHashDict.of({ current_working_directory: `/${path.reverse().join("/")}` });
  }

  private ls(a: PyObject): PyObject {
    let contents = [...this.current.contents.keys()];
    if (!truthy(a)) contents = contents.filter((name) => !name.startsWith("."));
    return PyHashDict.of({ current_directory_content: contents });
  }

  private cd(folderArg: PyObject): PyObject {
    let folder = rstrip(asStr(folderArg, "rstrip"), "/");
    if (folder === "") folder = "/";
    if (![".", "..", "/"].includes(folder) && folder.includes("/")) {
      return PyHashDict.of({ error: `cd: ${folder}: Unsupported path. Only one folder level at a time is supported.` });
    }
    if (folder === "..") {
      if (this.current.parent) this.current = this.current.parent;
      else if (this.root === this.current) return PyHashDict.of({ error: "Current directory is already the root. Cannot go back." });
      else return PyHashDict.of({ error: "cd: ..: No such directory" });
      return new PyHashDict();
    }
    const target = this.navigate(folder);
    if (target instanceof PyHashDict) return target;
    this.current = target;
    return PyHashDict.of({ current_working_directory: target.name });
  }

  private mkdir(name: PyObject): PyObject {
    if (!isValidName(name)) return PyHashDict.of({ error: `mkdir: cannot create directory '${pyStr(name)}': Invalid character` });
    if (this.current.has(name)) return PyHashDict.of({ error: `mkdir: cannot create directory '${pyStr(name)}': File exists` });
    this.current.addDirectory(nameKey(name));
    return null;
  }

  private touch(name: PyObject): PyObject {
    if (!isValidName(name)) return PyHashDict.of({ error: `touch: cannot touch '${pyStr(name)}': Invalid character` });
    if (this.current.has(name)) return PyHashDict.of({ error: `touch: cannot touch '${pyStr(name)}': File exists` });
    this.current.addFile(nameKey(name));
    return null;
  }

  private echo(content: PyObject, name: PyObject): PyObject {
    if (name === null) return PyHashDict.of({ terminal_output: content });
    if (!isValidName(name)) return PyHashDict.of({ error: `echo: cannot write to '${pyStr(name)}': Invalid character` });
    if (!truthy(name)) return PyHashDict.of({ terminal_output: content });
    if (!this.current.has(name)) return PyHashDict.of({ error: `echo: cannot write to '${pyStr(name)}': No such file` });
    const node = this.current.get(name)!;
    if (!(node instanceof FsFile)) throw attributeError("'Directory' object has no attribute '_write'");
    node.content = content;
    return null;
  }

  private cat(name: PyObject): PyObject {
    if (!isValidName(name)) return PyHashDict.of({ error: `cat: '${pyStr(name)}': Invalid character` });
    if (!this.current.has(name)) return PyHashDict.of({ error: `cat: '${pyStr(name)}': No such file or directory` });
    const node = this.current.get(name)!;
    if (node instanceof FsFile) return PyHashDict.of({ file_content: node.content });
    return PyHashDict.of({ error: `cat: '${pyStr(name)}': Is a directory` });
  }

  private find(path: PyObject, name: PyObject): PyObject {
    const target = this.navigate(path);
    if (target instanceof PyHashDict) {
      const message = dictGet(target, "error", "");
      if (typeof message === "string" && message.startsWith("cd:")) return PyHashDict.of({ error: message.replace("cd:", "find:") });
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
    return PyHashDict.of({ matches });
  }

  private wc(name: PyObject, mode: PyObject): PyObject {
    if (!["l", "w", "c"].includes(mode as string)) return PyHashDict.of({ error: `wc: invalid mode '${pyStr(mode)}'` });
    const node = this.current.has(name) ? this.current.get(name) : undefined;
    if (node instanceof FsFile) {
      const content = node.content;
      if (mode === "l") return PyHashDict.of({ count: BigInt(splitlines(asStr(content, "splitlines")).length), type: "lines" });
      if (mode === "w") return PyHashDict.of({ count: BigInt(splitWhitespace(asStr(content, "split")).length), type: "words" });
      return PyHashDict.of({ count: BigInt(len(content)), type: "characters" });
    }
    return PyHashDict.of({ error: `wc: ${pyStr(name)}: No such file or directory` });
  }

  private sort(name: PyObject): PyObject {
    const node = this.current.has(name) ? this.current.get(name) : undefined;
    if (node instanceof FsFile) {
      const lines = splitlines(asStr(node.content, "splitlines")).sort(compareCodePoints);
      return PyHashDict.of({ sorted_content: lines.join("\n") });
    }
    return PyHashDict.of({ error: `sort: ${pyStr(name)}: No such file or directory` });
  }

  private grep(name: PyObject, pattern: PyObject): PyObject {
    const node = this.current.has(name) ? this.current.get(name) : undefined;
    if (node instanceof FsFile) {
      const lines = splitlines(asStr(node.content, "splitlines"));
      return PyHashDict.of({ matching_lines: lines.filter((line) => line.includes(asSubstring(pattern))) });
    }
    return PyHashDict.of({ error: `grep: ${pyStr(name)}: No such file or directory` });
  }

  private du(human: PyObject): PyObject {
    const size = (node: FsNode): number => {
      if (node instanceof FsFile) return Buffer.byteLength(asStr(node.content, "encode"), "utf8");
      let total = 0;
      for (const child of node.contents.values()) total += size(child);
      return total;
    };
    let total = size(this.current);
    if (!truthy(human)) return PyHashDict.of({ disk_usage: `${total} bytes` });
    for (const unit of ["B", "KB", "MB", "GB", "TB"]) {
      if (total < 1024) return PyHashDict.of({ disk_usage: `${formatFixed(total, 2)} ${unit}` });
      total /= 1024;
    }
    return PyHashDict.of({ disk_usage: `${formatFixed(total, 2)} PB` });
  }

  private tail(name: PyObject, lines: PyObject): PyObject {
    const node = this.current.has(name) ? this.current.get(name) : undefined;
    if (node instanceof FsFile) {
      const content = splitlines(asStr(node.content, "splitlines"));
      let count = lines;
      if (operator.gt(count, BigInt(content.length))) count = BigInt(content.length);
      if (typeof count === "boolean") count = count ? 1n : 0n;
      if (typeof count !== "bigint") throw typeError("slice indices must be integers or None or have an __index__ method");
      // `content[-count:]`: the last `count` lines, all of them for 0, from line `-count` when negative.
      const n = Number(count);
      const start = n > 0 ? Math.max(content.length - n, 0) : Math.min(-n, content.length);
      return PyHashDict.of({ last_lines: content.slice(start).join("\n") });
    }
    return PyHashDict.of({ error: `tail: ${pyStr(name)}: No such file or directory` });
  }

  private diff(first: PyObject, second: PyObject): PyObject {
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
        return PyHashDict.of({ diff_lines: lines.join("\n") });
      }
    }
    return PyHashDict.of({ error: `diff: ${pyStr(first)} or ${pyStr(second)}: No such file or directory` });
  }

  private transfer(command: keyof typeof TRANSFERS, source: PyObject, destination: PyObject): PyObject {
    const { verb, done, move } = TRANSFERS[command];
    if (!this.current.has(source)) return PyHashDict.of({ error: `${command}: cannot ${verb} '${pyStr(source)}': No such file or directory` });
    const node = this.current.get(source)!;
    const src = source as string;
    if (operator.contains(destination, "/"))
      return PyHashDict.of({ error: `${command}: path not allowed in destination. Provide only a file or directory name.` });
    if (this.current.has(destination)) {
      const dest = destination as string;
      const target = this.current.get(dest)!;
      if (!(target instanceof FsDirectory)) return PyHashDict.of({ error: `${command}: cannot ${verb} '${src}' to '${dest}': Not a directory` });
      // Upstream's cp looks for "dest/src" among the directory's entries, which never holds a slash: only mv finds a clash.
      if (move && target.contents.has(src)) return PyHashDict.of({ error: `${command}: cannot ${verb} '${src}' to '${dest}/${src}': File exists` });
      if (move) this.current.contents.delete(src);
      this.place(target, src, node, !move);
      return PyHashDict.of({ result: `'${src}' ${done} to '${dest}/${src}'` });
    }
    const dest = nameKey(destination);
    if (move) this.current.contents.delete(src);
    this.place(this.current, dest, node, !move);
    return PyHashDict.of({ result: `'${src}' ${done} to '${dest}'` });
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

  private rm(name: PyObject): PyObject {
    if (!this.current.has(name)) return PyHashDict.of({ error: `rm: cannot remove '${pyStr(name)}': No such file or directory` });
    this.current.contents.delete(name as string);
    return PyHashDict.of({ result: `'${pyStr(name)}' removed` });
  }

  private rmdir(name: PyObject): PyObject {
    if (!this.current.has(name)) return PyHashDict.of({ error: `rmdir: cannot remove '${pyStr(name)}': No such file or directory` });
    const node = this.current.get(name)!;
    if (!(node instanceof FsDirectory)) return PyHashDict.of({ error: `rmdir: cannot remove '${pyStr(name)}': Not a directory` });
    if (node.contents.size > 0) return PyHashDict.of({ error: `rmdir: cannot remove '${pyStr(name)}': Directory not empty` });
    this.current.contents.delete(name as string);
    return PyHashDict.of({ result: `'${pyStr(name)}' removed` });
  }

  private navigate(pathArg: PyObject): FsDirectory | PyHashDict {
    if (pathArg === null || pathArg === ".") return this.current;
    if (pathArg === "/") return this.root;
    const path = asStr(pathArg, "strip");
    let dir = path.startsWith("/") ? this.root : this.current;
    for (const name of strip(path, "/").split("/")) {
      const next = dir.get(name);
      if (!(next instanceof FsDirectory)) return PyHashDict.of({ error: `cd: '${path}': No such file or directory` });
      dir = next;
    }
    return dir;
  }
}

/** The directory tree behind each state snapshot, so two snapshots compare as upstream's `Directory.__eq__`. */
const DIRECTORIES = new WeakMap<PyOpaque, FsDirectory>();

function asSubstring(value: PyObject): string {
  if (typeof value === "string") return value;
  throw typeError(`'in <string>' requires string as left operand, not ${pyTypeName(value)}`);
}
