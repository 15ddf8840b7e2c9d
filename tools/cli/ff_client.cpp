// SPDX-License-Identifier: LGPL-3.0-or-later
//
// ff-client: the project's NFSv4.1/4.2 command-line client.
//
//   ff-client --server 127.0.0.7 --port 2049 [--minor 2] [--trace] stat /export/file
//   ff-client --server 127.0.0.7 put big.bin /ff/big --wcc on --mirrors-check
//
// put and get do their I/O through a flex-files layout (NFSv3 to the data servers) when
// the MDS grants one, and through the MDS otherwise.
// Exit status: 0 success, 1 NFS error, 2 usage error, 3 transport error.
#include "client/file_ops.hpp"
#include "client/flex_file.hpp"
#include "client/nfs4_names.hpp"
#include "client/session.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <getopt.h>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace ffc = flexfiles::client;

namespace {

constexpr int kExitOk = 0;
constexpr int kExitNfs = 1;
constexpr int kExitUsage = 2;
constexpr int kExitTransport = 3;

void usage(std::FILE* out) {
    std::fputs("usage: ff-client --server ADDR [--port N] [--minor 1|2] [--trace]\n"
               "                 [--uid N] [--gid N] [--machine NAME] [--timeout MS] COMMAND ...\n"
               "\n"
               "commands:\n"
               "  stat PATH              walk PATH from the root, print its attributes\n"
               "  raw [--no-sequence] OP...\n"
               "                         send one compound of the given ops, print every op's\n"
               "                         status. OP is putrootfh, putpubfh, getfh, savefh,\n"
               "                         restorefh, lookupp, getattr, lookup:NAME, walk:PATH,\n"
               "                         putfh:HEX, or an op number with optional XDR argument\n"
               "                         bytes in hex (76, 77:00000001...). Exit 0 when a reply\n"
               "                         was decoded, whatever its status.\n"
               "  put LOCAL PATH [--wcc on|off] [--mirrors-check] [--via layout|mds]\n"
               "                         copy a local file to PATH: OPEN (create), LAYOUTGET,\n"
               "                         NFSv3 WRITE to every mirror, COMMIT, then with --wcc on\n"
               "                         (default) one compound PUTFH, LAYOUT_WCC, GETATTR, with\n"
               "                         --wcc off PUTFH, GETATTR; LAYOUTCOMMIT, LAYOUTRETURN,\n"
               "                         CLOSE. --mirrors-check reads every mirror back and\n"
               "                         compares. Without a layout (or --via mds): WRITE\n"
               "                         through the MDS.\n"
               "  get PATH [LOCAL] [--via layout|mds]\n"
               "                         copy PATH to LOCAL or stdout: through a READ layout\n"
               "                         (NFSv3 READ from the first mirror that answers) or the\n"
               "                         MDS\n"
               "  layout PATH [--iomode read|rw]\n"
               "                         LAYOUTGET and GETDEVICEINFO: print the layout and its\n"
               "                         devices, then LAYOUTRETURN\n"
               "  shell                  read commands from standard input, one per line, on one\n"
               "                         session: stat, put, get, layout, raw, and\n"
               "                         wcc on|off (whether later puts send LAYOUT_WCC; `wcc`\n"
               "                         alone shows it), help, quit. Exit status: the first\n"
               "                         failed command's, else 0\n"
               "\n"
               "exit status: 0 ok, 1 NFS error (or put's size check failed), 2 usage,\n"
               "3 transport error\n",
               out);
}

// Whether put sends LAYOUT_WCC when it has no --wcc: on, unless a shell's `wcc off` said so.
bool g_wcc_on = true;

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

uint32_t parse_u32(const char* what, const char* text, uint32_t max) {
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(text, &end, 0);
    if (errno != 0 || end == text || *end != '\0' || v > max) {
        throw UsageError(std::string("bad ") + what + ": '" + text + "'");
    }
    return static_cast<uint32_t>(v);
}

std::vector<char> parse_hex(const std::string& hex) {
    if (hex.size() % 2 != 0) {
        throw UsageError("odd number of hex digits in '" + hex + "'");
    }
    std::vector<char> out;
    for (std::size_t i = 0; i < hex.size(); i += 2) {
        const std::string byte = hex.substr(i, 2);
        char* end = nullptr;
        const long v = std::strtol(byte.c_str(), &end, 16);
        if (*end != '\0' || !std::isxdigit(static_cast<unsigned char>(byte[0]))) {
            throw UsageError("bad hex byte '" + byte + "'");
        }
        out.push_back(static_cast<char>(v));
    }
    return out;
}

int cmd_stat(ffc::Session& s, const std::vector<std::string>& args) {
    if (args.size() != 1) {
        throw UsageError("stat takes one PATH");
    }
    const ffc::StatResult st = ffc::stat_path(s, args[0]);
    std::cout << args[0] << "\n";
    std::cout << "  filehandle: " << st.fh.hex() << "\n";
    std::cout << ffc::format_attrs(st.attrs, "  ");
    return kExitOk;
}

void add_raw_op(ffc::Compound& c, const std::string& spec) {
    const auto colon = spec.find(':');
    const std::string name = spec.substr(0, colon);
    const std::string arg = colon == std::string::npos ? std::string() : spec.substr(colon + 1);
    const bool has_arg = colon != std::string::npos;
    if (!name.empty() && std::isdigit(static_cast<unsigned char>(name[0]))) {
        const std::vector<char> bytes = parse_hex(arg);
        c.raw(parse_u32("op number", name.c_str(), UINT32_MAX), bytes);
    } else if (name == "putrootfh" && !has_arg) {
        c.putrootfh();
    } else if (name == "putpubfh" && !has_arg) {
        c.putpubfh();
    } else if (name == "getfh" && !has_arg) {
        c.getfh();
    } else if (name == "savefh" && !has_arg) {
        c.savefh();
    } else if (name == "restorefh" && !has_arg) {
        c.restorefh();
    } else if (name == "lookupp" && !has_arg) {
        c.lookupp();
    } else if (name == "getattr" && !has_arg) {
        c.getattr(ffc::stat_attrs());
    } else if (name == "lookup" && has_arg) {
        c.lookup(arg);
    } else if (name == "walk" && has_arg) {
        c.walk(arg);
    } else if (name == "putfh" && has_arg) {
        c.putfh(ffc::FileHandle{parse_hex(arg)});
    } else {
        throw UsageError("unknown op '" + spec + "'");
    }
}

int cmd_raw(ffc::Session& s, const std::vector<std::string>& args) {
    ffc::Compound c;
    std::size_t first = 0;
    if (!args.empty() && args[0] == "--no-sequence") {
        c.no_sequence();
        first = 1;
    }
    if (args.size() <= first) {
        throw UsageError("raw needs at least one OP");
    }
    for (std::size_t i = first; i < args.size(); ++i) {
        add_raw_op(c, args[i]);
    }
    const ffc::CompoundResult r = s.send(c);
    if (!r.replied()) {
        std::cerr << "ff-client: no reply: " << r.describe() << "\n";
        return kExitTransport;
    }
    std::cout << "status: " << ffc::status_name(r.status) << "\n";
    if (r.sequence) {
        std::cout << "  SEQUENCE: " << ffc::status_name(r.sequence->status) << "\n";
    }
    for (std::size_t i = 0; i < c.size(); ++i) {
        std::cout << "  [" << i << "] " << c.label(i) << ": ";
        if (const auto st = r.status_of(i)) {
            std::cout << ffc::status_name(*st);
            if (r.ops[i].opnum != c.opnum(i)) {
                std::cout << " (reply op " << ffc::op_name(r.ops[i].opnum) << ")";
            }
        } else {
            std::cout << "not executed";
        }
        std::cout << "\n";
    }
    return kExitOk;
}

// Per-command flags: "--name value" pairs and "--name" switches after the positionals.
struct CommandArgs {
    std::vector<std::string> positional;
    std::map<std::string, std::string> values;
    std::set<std::string> switches;
};

CommandArgs parse_command(const std::vector<std::string>& args,
                          const std::set<std::string>& with_value,
                          const std::set<std::string>& switches) {
    CommandArgs out;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a.rfind("--", 0) != 0) {
            out.positional.push_back(a);
        } else if (with_value.count(a)) {
            if (i + 1 >= args.size()) {
                throw UsageError(a + " needs a value");
            }
            out.values[a] = args[++i];
        } else if (switches.count(a)) {
            out.switches.insert(a);
        } else {
            throw UsageError("unknown option '" + a + "'");
        }
    }
    return out;
}

std::string choice(const CommandArgs& c, const std::string& name,
                   const std::vector<std::string>& allowed) {
    auto it = c.values.find(name);
    if (it == c.values.end()) {
        return allowed.front();
    }
    if (std::find(allowed.begin(), allowed.end(), it->second) == allowed.end()) {
        throw UsageError("bad " + name + " '" + it->second + "'");
    }
    return it->second;
}

std::vector<char> read_local(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw UsageError("cannot read " + path + ": " + std::strerror(errno));
    }
    return std::vector<char>((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
}

std::string mirrors_text(const ffc::FlexFile& f) {
    std::string out;
    for (const ffc::FlexDataFile& d : f.data_files()) {
        out += (out.empty() ? "" : ", ") + d.address.host + ":" + std::to_string(d.address.port);
    }
    return out;
}

std::string wcc_attrs_text(const ffc::Fattr& a) {
    std::string out;
    auto add = [&](const std::string& s) { out += (out.empty() ? "" : " ") + s; };
    if (a.size) {
        add("size=" + std::to_string(*a.size));
    }
    if (a.space_used) {
        add("space_used=" + std::to_string(*a.space_used));
    }
    if (a.change) {
        add("change=" + std::to_string(*a.change));
    }
    if (a.time_modify) {
        add("time_modify=" + ffc::format_time(*a.time_modify));
    }
    return out;
}

// LAYOUTRETURN with the error and statistics report; a server that cannot decode the
// statistics (Ganesha 4.3's 32-bit io_info4 count) gets the errors alone.
void return_layout(ffc::FlexFile& f) {
    try {
        f.layoutreturn(true);
    } catch (const ffc::NfsError& e) {
        if (e.status() != NFS4ERR_BADXDR) {
            throw;
        }
        std::cerr << "ff-client: LAYOUTRETURN with I/O statistics refused (BADXDR); "
                     "returning with the error report only\n";
        f.layoutreturn(false);
    }
}

void write_through_mds(ffc::Session& s, ffc::FlexFile& f, const std::vector<char>& data) {
    ffc::write_all(s, f.file(), 0, data);
}

int cmd_put(ffc::Session& s, const std::vector<std::string>& raw_args) {
    const CommandArgs args = parse_command(raw_args, {"--wcc", "--via"}, {"--mirrors-check"});
    if (args.positional.size() != 2) {
        throw UsageError("put takes LOCAL PATH");
    }
    const bool wcc =
        args.values.count("--wcc") != 0 ? choice(args, "--wcc", {"on", "off"}) == "on" : g_wcc_on;
    const bool via_layout = choice(args, "--via", {"layout", "mds"}) == "layout";
    const bool check_mirrors = args.switches.count("--mirrors-check") != 0;
    const std::string& remote = args.positional[1];
    const std::vector<char> data = read_local(args.positional[0]);

    ffc::PnfsClient pnfs(s);
    ffc::FlexOpenOptions o;
    o.create = true;
    o.truncate = true;
    auto f = ffc::FlexFile::open(pnfs, remote, o);
    uint32_t granted = NFS4ERR_LAYOUTUNAVAILABLE;
    if (via_layout) {
        granted = f->layoutget(LAYOUTIOMODE4_RW);
        if (granted != NFS4_OK) {
            std::cerr << "ff-client: no layout (" << ffc::status_name(granted)
                      << "): writing through the MDS\n";
        }
    }
    bool through_layout = granted == NFS4_OK;
    if (through_layout) {
        const ffc::IoOutcome w = f->try_write(0, data, ffc::nfs3::Stable::unstable);
        const ffc::IoOutcome c = w.ok() ? f->commit() : ffc::IoOutcome{};
        if (!w.ok() || !c.ok()) {
            const std::string why = !w.ok() ? w.describe() : c.describe();
            const bool mds_forbidden = (f->layout().flags & FF_FLAGS_NO_IO_THRU_MDS) != 0;
            const uint32_t le = f->layouterror();
            std::cerr << "ff-client: data server I/O failed: " << why << "; LAYOUTERROR "
                      << ffc::status_name(le) << ", returning the layout with the error\n";
            return_layout(*f);
            if (mds_forbidden) {
                f->close();
                return kExitNfs;
            }
            std::cerr << "ff-client: writing through the MDS instead\n";
            through_layout = false;
        }
    }
    if (!through_layout) {
        write_through_mds(s, *f, data);
    }

    // Without LAYOUT_WCC the MDS learns the new size from LAYOUTCOMMIT (RFC 8435 section 6)
    // or, once its cached data attributes are older than WCC_Max_Age, from the data servers:
    // commit first, then ask.
    std::optional<uint64_t> commit_size;
    const bool commit_first = through_layout && !wcc;
    if (commit_first)
        commit_size = f->layoutcommit();
    ffc::WccGetattr g = (through_layout && wcc) ? f->send_layout_wcc_and_getattr() : f->getattr();
    std::cout << "wrote " << data.size() << " bytes to " << remote;
    if (through_layout) {
        std::cout << " via layout (" << f->layout().mirrors.size()
                  << " mirrors: " << mirrors_text(*f) << ")\n";
    } else {
        std::cout << " through the MDS\n";
    }
    if (!through_layout) {
        std::cout << "LAYOUT_WCC: not sent (no layout)\n";
    } else if (!wcc) {
        std::cout << "LAYOUT_WCC: off\n";
    } else {
        std::cout << "LAYOUT_WCC: " << ffc::status_name(*g.wcc_status)
                  << (g.compounds > 1 ? " (GETATTR sent again alone)" : "") << "\n";
    }
    std::cout << "GETATTR: " << wcc_attrs_text(g.attrs) << " (" << g.elapsed.count() << " us)\n";

    int rc = kExitOk;
    if (!g.attrs.size || *g.attrs.size != data.size()) {
        std::cout << "size check: FAILED (the MDS says "
                  << (g.attrs.size ? std::to_string(*g.attrs.size) : std::string("nothing")) << ", "
                  << data.size() << " bytes were written)\n";
        rc = kExitNfs;
    } else {
        std::cout << "size check: ok\n";
    }

    if (through_layout) {
        if (check_mirrors) {
            for (std::size_t m = 0; m < f->layout().mirrors.size(); ++m) {
                const std::vector<char> back = f->read_all(m);
                const auto diff = std::mismatch(back.begin(), back.end(), data.begin(), data.end());
                if (back == data) {
                    std::cout << "mirror " << m << ": " << back.size() << " bytes, identical\n";
                } else {
                    std::cout << "mirror " << m << ": DIFFERS (" << back.size()
                              << " bytes, first difference at byte " << (diff.first - back.begin())
                              << ")\n";
                    rc = kExitNfs;
                }
            }
        }
        if (!commit_first)
            commit_size = f->layoutcommit();
        std::cout << "LAYOUTCOMMIT: "
                  << (commit_size ? "new size " + std::to_string(*commit_size)
                                  : std::string("size unchanged"))
                  << "\n";
        return_layout(*f);
    }
    f->close();
    return rc;
}

int cmd_get(ffc::Session& s, const std::vector<std::string>& raw_args) {
    const CommandArgs args = parse_command(raw_args, {"--via"}, {});
    if (args.positional.empty() || args.positional.size() > 2) {
        throw UsageError("get takes PATH [LOCAL]");
    }
    const bool via_layout = choice(args, "--via", {"layout", "mds"}) == "layout";
    const std::string& remote = args.positional[0];

    ffc::PnfsClient pnfs(s);
    ffc::FlexOpenOptions o;
    o.access = OPEN4_SHARE_ACCESS_READ;
    auto f = ffc::FlexFile::open(pnfs, remote, o);
    std::vector<char> data;
    bool done = false;
    if (via_layout) {
        const uint32_t granted = f->layoutget(LAYOUTIOMODE4_READ);
        if (granted != NFS4_OK) {
            std::cerr << "ff-client: no layout (" << ffc::status_name(granted)
                      << "): reading through the MDS\n";
        } else {
            for (std::size_t m = 0; m < f->layout().mirrors.size() && !done; ++m) {
                try {
                    data = f->read_all(m);
                    done = true;
                    std::cerr << "ff-client: read " << data.size() << " bytes from mirror " << m
                              << " (" << f->data_files()[m].address.host << ")\n";
                } catch (const ffc::DataServerError& e) {
                    std::cerr << "ff-client: " << e.what() << "\n";
                }
            }
            if (!done) {
                const uint32_t le = f->layouterror();
                std::cerr << "ff-client: no mirror could be read (LAYOUTERROR "
                          << ffc::status_name(le) << "): reading through the MDS\n";
            }
            return_layout(*f);
        }
    }
    if (!done) {
        data = ffc::read_all(s, f->file());
    }
    f->close();
    if (args.positional.size() == 2) {
        std::ofstream out(args.positional[1], std::ios::binary | std::ios::trunc);
        out.write(data.data(), static_cast<std::streamsize>(data.size()));
        if (!out) {
            std::cerr << "ff-client: cannot write " << args.positional[1] << "\n";
            return kExitUsage;
        }
    } else {
        std::cout.write(data.data(), static_cast<std::streamsize>(data.size()));
    }
    return kExitOk;
}

int cmd_layout(ffc::Session& s, const std::vector<std::string>& raw_args) {
    const CommandArgs args = parse_command(raw_args, {"--iomode"}, {});
    if (args.positional.size() != 1) {
        throw UsageError("layout takes PATH");
    }
    const bool rw = choice(args, "--iomode", {"read", "rw"}) == "rw";
    ffc::PnfsClient pnfs(s);
    ffc::FlexOpenOptions o;
    o.access = rw ? OPEN4_SHARE_ACCESS_BOTH : OPEN4_SHARE_ACCESS_READ;
    auto f = ffc::FlexFile::open(pnfs, args.positional[0], o);
    const uint32_t granted = f->layoutget(rw ? LAYOUTIOMODE4_RW : LAYOUTIOMODE4_READ);
    if (granted != NFS4_OK) {
        std::cout << args.positional[0] << ": no layout: " << ffc::status_name(granted) << "\n";
        f->close();
        return kExitNfs;
    }
    std::cout << args.positional[0] << "\n" << f->layout().describe();
    for (const ffc::FlexDataFile& d : f->data_files()) {
        std::cout << "device " << ffc::format_deviceid(d.ds.deviceid) << " (mirror " << d.mirror
                  << ")\n"
                  << pnfs.device(d.ds.deviceid).describe();
    }
    return_layout(*f);
    f->close();
    return kExitOk;
}

using Command = int (*)(ffc::Session&, const std::vector<std::string>&);
Command find_command(const std::string& name);

// One command, its errors reported on stderr, as an exit status; usage errors also print
// the usage text when `with_usage` (the command line, not a shell's line).
int run_reported(const std::function<int()>& run, bool with_usage = false) {
    try {
        return run();
    } catch (const UsageError& e) {
        std::cerr << "ff-client: " << e.what() << "\n";
        if (with_usage) {
            usage(stderr);
        }
        return kExitUsage;
    } catch (const ffc::NfsError& e) {
        std::cerr << "ff-client: " << e.what() << "\n";
        return kExitNfs;
    } catch (const ffc::TransportError& e) {
        std::cerr << "ff-client: " << e.what() << "\n";
        return kExitTransport;
    } catch (const ffc::DataServerError& e) {
        std::cerr << "ff-client: " << e.what() << "\n";
        return e.rpc_status() == ffc::RpcStatus::ok ? kExitNfs : kExitTransport;
    } catch (const std::exception& e) {
        std::cerr << "ff-client: " << e.what() << "\n";
        return kExitNfs;
    }
}

int cmd_wcc(const std::vector<std::string>& args) {
    if (args.size() > 1 || (args.size() == 1 && args[0] != "on" && args[0] != "off")) {
        throw UsageError("wcc takes on or off");
    }
    if (args.size() == 1) {
        g_wcc_on = args[0] == "on";
    }
    std::cout << "wcc " << (g_wcc_on ? "on" : "off")
              << (g_wcc_on ? ": put reports the data servers' attributes with LAYOUT_WCC\n"
                           : ": put sends no LAYOUT_WCC (the MDS asks the data servers)\n");
    return kExitOk;
}

// Commands from standard input on one session; words split at blanks, # starts a comment.
int cmd_shell(ffc::Session& s, const std::vector<std::string>& args) {
    if (!args.empty()) {
        throw UsageError("shell takes no arguments (commands come from standard input)");
    }
    const bool interactive = isatty(STDIN_FILENO) != 0;
    int first_failure = kExitOk;
    std::string line;
    while (true) {
        if (interactive) {
            std::cout << "ff> " << std::flush;
        }
        if (!std::getline(std::cin, line)) {
            break;
        }
        line = line.substr(0, line.find('#'));
        std::istringstream words(line);
        std::vector<std::string> argv{std::istream_iterator<std::string>(words),
                                      std::istream_iterator<std::string>()};
        if (argv.empty()) {
            continue;
        }
        const std::string name = argv[0];
        argv.erase(argv.begin());
        if (name == "quit" || name == "exit") {
            break;
        }
        int rc = kExitOk;
        if (name == "help") {
            usage(stdout);
        } else if (name == "wcc") {
            rc = run_reported([&] { return cmd_wcc(argv); });
        } else if (name == "shell") {
            std::cerr << "ff-client: already in a shell\n";
            rc = kExitUsage;
        } else if (Command run = find_command(name)) {
            rc = run_reported([&] { return run(s, argv); });
        } else {
            std::cerr << "ff-client: unknown command '" << name << "' (help lists them)\n";
            rc = kExitUsage;
        }
        if (first_failure == kExitOk) {
            first_failure = rc;
        }
    }
    return first_failure;
}

Command find_command(const std::string& name) {
    static const std::map<std::string, Command> kCommands{
        {"stat", cmd_stat}, {"raw", cmd_raw},       {"put", cmd_put},
        {"get", cmd_get},   {"layout", cmd_layout}, {"shell", cmd_shell},
    };
    const auto it = kCommands.find(name);
    return it == kCommands.end() ? nullptr : it->second;
}

// The command line: options, then one command on a new session. Throws what run_reported
// reports.
int run_command_line(int argc, char** argv) {
    ffc::SessionOptions opts;
    bool have_server = false;
    bool trace = false;
    static const option kOptions[] = {
        {"server", required_argument, nullptr, 's'},  {"port", required_argument, nullptr, 'p'},
        {"minor", required_argument, nullptr, 'm'},   {"trace", no_argument, nullptr, 't'},
        {"uid", required_argument, nullptr, 'u'},     {"gid", required_argument, nullptr, 'g'},
        {"machine", required_argument, nullptr, 'M'}, {"timeout", required_argument, nullptr, 'T'},
        {"help", no_argument, nullptr, 'h'},          {nullptr, 0, nullptr, 0},
    };
    int ch;
    while ((ch = getopt_long(argc, argv, "+s:p:m:tu:g:M:T:h", kOptions, nullptr)) != -1) {
        switch (ch) {
        case 's':
            opts.host = optarg;
            have_server = true;
            break;
        case 'p':
            opts.port = static_cast<uint16_t>(parse_u32("port", optarg, 65535));
            break;
        case 'm':
            opts.minor_version = parse_u32("minor version", optarg, 2);
            if (opts.minor_version == 0) {
                throw UsageError("minor version must be 1 or 2");
            }
            break;
        case 't':
            trace = true;
            break;
        case 'u':
            opts.cred.uid = parse_u32("uid", optarg, UINT32_MAX);
            break;
        case 'g':
            opts.cred.gid = parse_u32("gid", optarg, UINT32_MAX);
            break;
        case 'M':
            opts.cred.machine_name = optarg;
            break;
        case 'T':
            opts.timeout = std::chrono::milliseconds(parse_u32("timeout", optarg, 3600000));
            break;
        case 'h':
            usage(stdout);
            return kExitOk;
        default:
            usage(stderr);
            return kExitUsage;
        }
    }
    if (!have_server || optind >= argc) {
        usage(stderr);
        return kExitUsage;
    }
    const std::string command = argv[optind];
    const std::vector<std::string> args(argv + optind + 1, argv + argc);
    if (command == "wcc") {
        throw UsageError("wcc on|off sets the mode of a shell session (ff-client ... shell); "
                         "for one put, use put --wcc on|off");
    }
    const Command run = find_command(command);
    if (run == nullptr) {
        throw UsageError("unknown command '" + command + "'");
    }
    if (trace) {
        opts.trace = [](const std::string& line) { std::cerr << "trace: " << line << "\n"; };
    }
    auto session = ffc::Session::open(opts);
    const int rc = run(*session, args);
    session->close();
    return rc;
}

} // namespace

int main(int argc, char** argv) {
    return run_reported([&] { return run_command_line(argc, argv); }, true);
}
