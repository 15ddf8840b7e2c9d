// SPDX-License-Identifier: LGPL-3.0-or-later
#include "file_ops.hpp"

#include <algorithm>
#include <stdexcept>

namespace flexfiles::client {

namespace {
// Room for the COMPOUND, SEQUENCE, PUTFH and READ/WRITE headers around the data.
constexpr uint32_t kIoOverhead = 4096;
} // namespace

std::pair<std::string, std::string> split_parent(std::string_view path) {
    std::string p(path);
    while (p.size() > 1 && p.back() == '/') {
        p.pop_back();
    }
    const auto slash = p.rfind('/');
    std::string name = slash == std::string::npos ? p : p.substr(slash + 1);
    std::string parent = slash == std::string::npos ? "/" : p.substr(0, slash);
    if (name.empty() || name == "." || name == "..") {
        throw std::invalid_argument("path '" + std::string(path) + "' names no file");
    }
    return {parent.empty() ? "/" : parent, name};
}

StatResult stat_path(Session& s, std::string_view path, const AttrMask& attrs) {
    Compound c;
    c.walk(path).getfh().getattr(attrs);
    CompoundResult r = s.send(c);
    r.check("stat " + std::string(path));
    return StatResult{r.fh(c.size() - 2), r.attrs(c.size() - 1)};
}

FileHandle lookup_path(Session& s, std::string_view path) {
    Compound c;
    c.walk(path).getfh();
    CompoundResult r = s.send(c);
    r.check("lookup " + std::string(path));
    return r.fh(c.size() - 1);
}

void remove_path(Session& s, std::string_view path) {
    const auto [parent, name] = split_parent(path);
    Compound c;
    c.walk(parent).remove(name);
    s.send(c).check("remove " + std::string(path));
}

OpenFile open_path(Session& s, std::string_view path, const OpenOptions& o) {
    const auto [parent, name] = split_parent(path);
    OpenArgs args;
    args.name = name;
    args.share_access = o.access;
    args.share_deny = o.deny;
    args.clientid = s.clientid();
    args.owner = "ff-client open-owner";
    if (o.create) {
        args.create = true;
        args.create_mode = o.exclusive ? GUARDED4 : UNCHECKED4;
        args.create_attrs.mode = o.mode;
        if (o.truncate) {
            args.create_attrs.size = 0;
        }
    }
    Compound c;
    c.walk(parent).open(args).getfh().getattr(stat_attrs());
    CompoundResult r = s.send(c);
    r.check("open " + std::string(path));
    OpenFile f;
    f.path = std::string(path);
    f.stateid = r.stateid(c.size() - 3);
    f.fh = r.fh(c.size() - 2);
    f.attrs = r.attrs(c.size() - 1);
    return f;
}

void close_file(Session& s, OpenFile& f) {
    Compound c;
    c.putfh(f.fh).close(f.stateid);
    CompoundResult r = s.send(c);
    r.check("close " + f.path);
    f.stateid = r.stateid(1);
}

std::vector<char> read_file(Session& s, const OpenFile& f, uint64_t offset, uint32_t count,
                            bool* eof) {
    Compound c;
    c.putfh(f.fh).read(f.stateid, offset, count);
    CompoundResult r = s.send(c);
    r.check("read " + f.path);
    const READ4resok& ok = r.read(1);
    if (eof) {
        *eof = ok.eof;
    }
    return std::vector<char>(ok.data.data_val, ok.data.data_val + ok.data.data_len);
}

uint32_t write_file(Session& s, const OpenFile& f, uint64_t offset, std::span<const char> data,
                    stable_how4 stable) {
    Compound c;
    c.putfh(f.fh).write(f.stateid, offset, data, stable);
    CompoundResult r = s.send(c);
    r.check("write " + f.path);
    return r.write(1).count;
}

uint32_t io_chunk_size(const Session& s) {
    const uint32_t limit = std::min(s.fore_attrs().max_request, s.fore_attrs().max_response);
    return std::clamp<uint32_t>(limit > kIoOverhead ? limit - kIoOverhead : 0, 4096, 1u << 20);
}

std::vector<char> read_all(Session& s, const OpenFile& f) {
    std::vector<char> out;
    const uint32_t chunk = io_chunk_size(s);
    bool eof = false;
    while (!eof) {
        std::vector<char> part = read_file(s, f, out.size(), chunk, &eof);
        if (part.empty() && !eof) {
            throw NfsError(NFS4ERR_IO, NFS4_OP_READ,
                           "read " + f.path + ": empty READ without eof at " +
                               std::to_string(out.size()));
        }
        out.insert(out.end(), part.begin(), part.end());
    }
    return out;
}

void write_all(Session& s, const OpenFile& f, uint64_t offset, std::span<const char> data,
               stable_how4 stable) {
    const uint32_t chunk = io_chunk_size(s);
    std::size_t done = 0;
    while (done < data.size()) {
        const auto piece = data.subspan(done, std::min<std::size_t>(chunk, data.size() - done));
        const uint32_t n = write_file(s, f, offset + done, piece, stable);
        if (n == 0) {
            throw NfsError(NFS4ERR_IO, NFS4_OP_WRITE,
                           "write " + f.path + ": server wrote 0 bytes at " +
                               std::to_string(offset + done));
        }
        done += n;
    }
}

} // namespace flexfiles::client
