// SPDX-License-Identifier: LGPL-3.0-or-later
//
// ff-client: the project's NFSv4.1/4.2 command-line client.
//
//   ff-client --server 127.0.0.7 --port 2049 [--minor 2] [--trace] stat /export/file
//
// Exit status: 0 success, 1 NFS error, 2 usage error, 3 transport error.
#include "client/file_ops.hpp"
#include "client/nfs4_names.hpp"
#include "client/session.hpp"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <getopt.h>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
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
               "  put LOCAL PATH         copy a local file to PATH (OPEN create, WRITE, CLOSE)\n"
               "  get PATH [LOCAL]       copy PATH to LOCAL or stdout (OPEN, READ, CLOSE)\n"
               "\n"
               "exit status: 0 ok, 1 NFS error, 2 usage, 3 transport error\n",
               out);
}

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

int cmd_put(ffc::Session& s, const std::vector<std::string>& args) {
    if (args.size() != 2) {
        throw UsageError("put takes LOCAL PATH");
    }
    std::ifstream in(args[0], std::ios::binary);
    if (!in) {
        std::cerr << "ff-client: cannot read " << args[0] << ": " << std::strerror(errno) << "\n";
        return kExitUsage;
    }
    const std::vector<char> data((std::istreambuf_iterator<char>(in)),
                                 std::istreambuf_iterator<char>());
    ffc::OpenOptions o;
    o.access = OPEN4_SHARE_ACCESS_BOTH;
    o.create = true;
    o.truncate = true;
    ffc::OpenFile f = ffc::open_path(s, args[1], o);
    ffc::write_all(s, f, 0, data);
    ffc::close_file(s, f);
    std::cout << "wrote " << data.size() << " bytes to " << args[1] << "\n";
    return kExitOk;
}

int cmd_get(ffc::Session& s, const std::vector<std::string>& args) {
    if (args.empty() || args.size() > 2) {
        throw UsageError("get takes PATH [LOCAL]");
    }
    ffc::OpenFile f = ffc::open_path(s, args[0]);
    const std::vector<char> data = ffc::read_all(s, f);
    ffc::close_file(s, f);
    if (args.size() == 2) {
        std::ofstream out(args[1], std::ios::binary | std::ios::trunc);
        out.write(data.data(), static_cast<std::streamsize>(data.size()));
        if (!out) {
            std::cerr << "ff-client: cannot write " << args[1] << "\n";
            return kExitUsage;
        }
    } else {
        std::cout.write(data.data(), static_cast<std::streamsize>(data.size()));
    }
    return kExitOk;
}

} // namespace

int main(int argc, char** argv) {
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
    try {
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
        int (*run)(ffc::Session&, const std::vector<std::string>&) = nullptr;
        if (command == "stat") {
            run = cmd_stat;
        } else if (command == "raw") {
            run = cmd_raw;
        } else if (command == "put") {
            run = cmd_put;
        } else if (command == "get") {
            run = cmd_get;
        } else {
            throw UsageError("unknown command '" + command + "'");
        }
        if (trace) {
            opts.trace = [](const std::string& line) { std::cerr << "trace: " << line << "\n"; };
        }
        auto session = ffc::Session::open(opts);
        const int rc = run(*session, args);
        session->close();
        return rc;
    } catch (const UsageError& e) {
        std::cerr << "ff-client: " << e.what() << "\n";
        usage(stderr);
        return kExitUsage;
    } catch (const ffc::NfsError& e) {
        std::cerr << "ff-client: " << e.what() << "\n";
        return kExitNfs;
    } catch (const ffc::TransportError& e) {
        std::cerr << "ff-client: " << e.what() << "\n";
        return kExitTransport;
    } catch (const std::exception& e) {
        std::cerr << "ff-client: " << e.what() << "\n";
        return kExitNfs;
    }
}
