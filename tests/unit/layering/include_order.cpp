// SPDX-License-Identifier: LGPL-3.0-or-later
//
// include_order: checks that fsal_flexfiles/ includes one way only.
//
//   include_order [--ganesha-include DIR]... [--expect FILE] FSAL_ROOT
//
// Ranks, lowest first: core/model 0, core/fleet 1, core/cache and core/store 2 (peers),
// core/mds 3, core/layout 4, then the FSAL layer (everything else under FSAL_ROOT). The
// FSAL layer is one layer with ganesha/ as its lowest part, so here ganesha/ is rank 5 and
// the rest of the FSAL layer rank 6. core/<lib>/tests/ belongs to <lib>.
//
// Rules (no exceptions list):
//  1. A file includes ("" or <>) project headers only from its own folder's library or a
//     lower rank; two libraries of the same rank (cache, store) never include each other.
//  2. core/ never includes a Ganesha header. The strict form: a quoted include in core/ must
//     resolve to a file inside core/ (protocols/include/ is Ganesha-facing: its header
//     includes nfsv41.h), and an angle include in core/ must not resolve in the Ganesha and
//     ntirpc directories given with --ganesha-include. System headers in core/ take <>.
//  3. A quoted include resolves against the including file's folder, then FSAL_ROOT/,
//     FSAL_ROOT/core/ and <repo>/protocols/include/ (angle includes: the same roots without
//     the file's folder). Unresolved is a violation in core/ and fine in the FSAL layer
//     (Ganesha and system headers). Resolving to two different files through two roots is
//     a violation too: which one is meant then depends on the -I order.
// Also reported: a missing core/, and a file in core/ outside the six libraries.
//
// Prints one line per violation, `<path from the repo>:<line>: includes "x" ...: <rule>`,
// and exits 1 if there is any. With --expect FILE it exits 0 only if the violations are
// exactly FILE's lines (blank lines and lines starting with # ignored), and says which differ.
// The repo is FSAL_ROOT's parent folder. Scans .c .cpp .h .hpp, comments stripped.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct Unit {
    std::string name; // "core/model", "ganesha", "FSAL layer"
    int rank;         // -1: in core/ but in none of its libraries
    bool core;
};

const std::map<std::string, int> kCoreRanks = {{"model", 0}, {"fleet", 1}, {"cache", 2},
                                               {"store", 2}, {"mds", 3},   {"layout", 4}};

struct Tree {
    fs::path repo, root, core, protocols;
    std::vector<fs::path> ganesha;
    std::vector<std::string> violations;

    std::string rel(const fs::path& p) const { return p.lexically_relative(repo).generic_string(); }

    // Which unit a file under the tree belongs to; nullopt outside FSAL_ROOT.
    std::optional<Unit> unit_of(const fs::path& file) const {
        fs::path r = file.lexically_relative(root);
        if (r.empty() || *r.begin() == "..")
            return std::nullopt;
        std::vector<std::string> parts;
        for (const auto& c : r)
            parts.push_back(c.string());
        if (parts[0] == "core") {
            if (parts.size() < 3 || !kCoreRanks.contains(parts[1]))
                return Unit{parts.size() < 3 ? "core" : "core/" + parts[1], -1, true};
            return Unit{"core/" + parts[1], kCoreRanks.at(parts[1]), true};
        }
        if (parts[0] == "ganesha" && parts.size() > 1)
            return Unit{"ganesha", 5, false};
        return Unit{"FSAL layer", 6, false};
    }

    // Every project file the include can name, the including folder first (quoted only).
    std::vector<fs::path> resolve(const fs::path& dir, const std::string& name, bool quoted) const {
        std::error_code ec;
        if (quoted && fs::is_regular_file(dir / name, ec))
            return {(dir / name).lexically_normal()};
        std::vector<fs::path> hits;
        for (const fs::path& r : {root, core, protocols}) {
            fs::path p = (r / name).lexically_normal();
            if (fs::is_regular_file(p, ec) && std::find(hits.begin(), hits.end(), p) == hits.end())
                hits.push_back(p);
        }
        return hits;
    }

    bool in_ganesha(const std::string& name) const {
        std::error_code ec;
        return std::any_of(ganesha.begin(), ganesha.end(),
                           [&](const fs::path& g) { return fs::is_regular_file(g / name, ec); });
    }

    void check(const fs::path& file, const Unit& from, int line, const std::string& name,
               bool quoted) {
        const std::string spelled = quoted ? '"' + name + '"' : '<' + name + '>';
        auto report = [&](const std::string& what) {
            violations.push_back(rel(file) + ":" + std::to_string(line) + ": includes " + spelled +
                                 " " + what);
        };
        const std::string here = "from " + from.name + " (rank " + std::to_string(from.rank) + ")";
        const auto hits = resolve(file.parent_path(), name, quoted);
        if (hits.size() > 1) {
            std::string all;
            for (const auto& h : hits)
                all += (all.empty() ? "" : " and ") + rel(h);
            return report("(" + all + "): ambiguous, the -I order decides which one");
        }
        if (hits.empty()) {
            if (!from.core)
                return; // a Ganesha or system header: the FSAL layer may use both
            if (in_ganesha(name))
                return report(here + ": a Ganesha header: a core library never includes Ganesha");
            if (quoted)
                return report(here + ": does not resolve: a quoted include in core/ names a core "
                                     "header (a system header takes <>)");
            return; // a system header
        }
        const auto to = unit_of(hits[0]);
        if (!to) {
            if (from.core)
                report("(" + rel(hits[0]) + ") " + here +
                       ": outside core/: a core library includes only core headers");
            return;
        }
        if (to->name == from.name)
            return;
        const std::string there = "(" + to->name + ", rank " + std::to_string(to->rank) + ") ";
        if (to->rank < 0)
            report(there + here + ": not in one of the core libraries");
        else if (to->rank > from.rank)
            report(there + here + ": a lower layer may not include a higher one");
        else if (to->rank == from.rank)
            report(there + here + ": peers of the same rank may not include each other");
    }
};

// The text with comments blanked (newlines kept, so line numbers stay); literals kept as is.
std::string strip_comments(const std::string& s) {
    std::string out = s;
    for (size_t i = 0; i < s.size();) {
        if (s.compare(i, 2, "//") == 0) {
            for (; i < s.size() && s[i] != '\n'; ++i)
                out[i] = ' ';
        } else if (s.compare(i, 2, "/*") == 0) {
            size_t end = s.find("*/", i + 2);
            end = end == std::string::npos ? s.size() : end + 2;
            for (; i < end; ++i)
                out[i] = s[i] == '\n' ? '\n' : ' ';
        } else if (s[i] == '"' && i > 0 && s[i - 1] == 'R') { // raw string R"delim(...)delim"
            size_t open = s.find('(', i);
            if (open == std::string::npos)
                break;
            size_t end = s.find(")" + s.substr(i + 1, open - i - 1) + "\"", open);
            i = end == std::string::npos ? s.size() : end + 1;
        } else if (s[i] == '"' ||
                   (s[i] == '\'' && (i == 0 || !std::isalnum((unsigned char)s[i - 1])))) {
            const char quote = s[i++]; // a ' after a digit or letter is a digit separator
            for (; i < s.size() && s[i] != quote && s[i] != '\n'; ++i)
                if (s[i] == '\\')
                    ++i;
            ++i;
        } else {
            ++i;
        }
    }
    return out;
}

int usage() {
    std::cerr << "usage: include_order [--ganesha-include DIR]... [--expect FILE] FSAL_ROOT\n";
    return 2;
}

} // namespace

int main(int argc, char** argv) {
    Tree t;
    std::optional<fs::path> expect;
    std::vector<std::string> args(argv + 1, argv + argc);
    for (size_t i = 0; i < args.size(); ++i) {
        if ((args[i] == "--ganesha-include" || args[i] == "--expect") && i + 1 < args.size()) {
            if (args[i] == "--expect")
                expect = args[++i];
            else
                t.ganesha.push_back(args[++i]);
        } else if (t.root.empty() && args[i][0] != '-') {
            t.root = fs::weakly_canonical(args[i]);
        } else {
            return usage();
        }
    }
    if (t.root.empty())
        return usage();
    for (const auto& d : t.ganesha)
        if (!fs::is_directory(d)) {
            std::cerr << "include_order: Ganesha include dir " << d << " does not exist\n";
            return 2;
        }
    if (!fs::is_directory(t.root)) {
        std::cerr << "include_order: " << t.root << " is not a folder\n";
        return 2;
    }
    t.repo = t.root.parent_path();
    t.core = t.root / "core";
    t.protocols = t.repo / "protocols" / "include";
    if (!fs::is_directory(t.core))
        t.violations.push_back(t.rel(t.core) +
                               ": does not exist: the core libraries are not in place");

    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(t.root)) {
        const auto ext = e.path().extension();
        if (e.is_regular_file() && (ext == ".c" || ext == ".cpp" || ext == ".h" || ext == ".hpp"))
            files.push_back(e.path().lexically_normal());
    }
    std::sort(files.begin(), files.end());

    const std::regex include_line(R"(^\s*#\s*include\s*([<"])([^>"]+)[>"])");
    for (const auto& file : files) {
        const Unit from = *t.unit_of(file);
        if (from.rank < 0) {
            t.violations.push_back(t.rel(file) + ": in " + from.name +
                                   ", not in one of the core libraries (model fleet cache store "
                                   "mds layout): it has no rank");
            continue;
        }
        std::ifstream in(file, std::ios::binary);
        std::stringstream text;
        text << in.rdbuf();
        std::istringstream lines(strip_comments(text.str()));
        std::string line;
        std::smatch m;
        for (int n = 1; std::getline(lines, line); ++n)
            if (std::regex_search(line, m, include_line))
                t.check(file, from, n, m[2].str(), m[1].str() == "\"");
    }

    for (const auto& v : t.violations)
        std::cout << v << "\n";
    if (!expect) {
        if (t.violations.empty())
            std::cout << "include order: " << files.size() << " files, no violations\n";
        return t.violations.empty() ? 0 : 1;
    }

    std::ifstream in(*expect);
    if (!in) {
        std::cerr << "include_order: cannot read " << *expect << "\n";
        return 2;
    }
    std::vector<std::string> wanted, got = t.violations, missing, unexpected;
    for (std::string line; std::getline(in, line);)
        if (!line.empty() && line[0] != '#')
            wanted.push_back(line);
    std::sort(wanted.begin(), wanted.end());
    std::sort(got.begin(), got.end());
    std::set_difference(wanted.begin(), wanted.end(), got.begin(), got.end(),
                        std::back_inserter(missing));
    std::set_difference(got.begin(), got.end(), wanted.begin(), wanted.end(),
                        std::back_inserter(unexpected));
    for (const auto& v : missing)
        std::cout << "MISSING (expected, not reported): " << v << "\n";
    for (const auto& v : unexpected)
        std::cout << "UNEXPECTED (reported, not expected): " << v << "\n";
    std::cout << got.size() << " violations, " << wanted.size() << " expected: "
              << (missing.empty() && unexpected.empty() ? "as expected" : "MISMATCH") << "\n";
    return missing.empty() && unexpected.empty() ? 0 : 1;
}
