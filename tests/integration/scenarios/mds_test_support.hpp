// SPDX-License-Identifier: LGPL-3.0-or-later
//
// What the MDS data-path scenarios (mds_*_test.cpp) share: a cluster of 1 MDS + 3 NFSv3
// data servers where the MDS export is FLEXFILES over VFS and also serves NFSv3 (Protocols
// 3 and 4), so tests drive the MDS's proxy path with the harness's NFSv3 client; and the
// checks on the data servers' export folders on disk.
#pragma once

#include "ff_harness/harness.hpp"
#include "model/naming.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <vector>

namespace mds_test {

using namespace flexfiles::harness;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

// The FLEXFILES defaults for synthetic owners (config_blocks.h).
constexpr std::uint32_t kFencingMin = 1000000;
constexpr std::uint32_t kFencingMax = 1999999;

struct MdsSettings {
    unsigned mirrors = 2;
    unsigned io_timeout_ms = 2000; // DS_IO_Timeout
    std::string extra;             // more lines in the FLEXFILES block
    std::string ds_extra;          // more lines in every Data_Server block
    std::vector<unsigned> only;    // data servers listed (empty: all)
};

inline MdsSettings with_mirrors(unsigned mirrors) {
    MdsSettings s;
    s.mirrors = mirrors;
    return s;
}

// Mirrors = 2 and DS_IO_Timeout = 1 s: failure scenarios that wait out a frozen data server.
inline MdsSettings fast_failures() {
    MdsSettings s;
    s.mirrors = 2;
    s.io_timeout_ms = 1000;
    return s;
}

inline Nfs3SetAttrs size_attr(std::uint64_t size) {
    Nfs3SetAttrs a;
    a.size = size;
    return a;
}

inline Nfs3SetAttrs mode_attr(std::uint32_t mode) {
    Nfs3SetAttrs a;
    a.mode = mode;
    return a;
}

inline std::vector<std::uint8_t> pattern(std::size_t size, unsigned seed) {
    std::vector<std::uint8_t> out(size);
    for (std::size_t i = 0; i < size; ++i)
        out[i] = static_cast<std::uint8_t>((seed * 131u + i * 7u + i / 251u) & 0xff);
    return out;
}

// The MDS serves NFSv3 too (the proxy path for clients without layouts) and keeps its
// layout store where the test can find it after a restart (the default: its RecoveryRoot).
inline void configure_flexfiles_mds(ServerOptions& mds, const std::vector<DataServerInfo>& ds,
                                    const MdsSettings& s) {
    mds.protocols = {3, 4};
    mds.exports[0].protocols = {3, 4};
    FlexfilesOptions ff;
    ff.mirrors = s.mirrors;
    ff.only = s.only;
    ff.data_server_extra = s.ds_extra;
    ff.extra = "        DS_IO_Timeout = " + std::to_string(s.io_timeout_ms) + ";\n" + s.extra;
    mds.exports[0].fsal = flexfiles_fsal_block(ds, ff);
}

inline ClusterOptions flexfiles_cluster(MdsSettings s = {}) {
    ClusterOptions o;
    o.data_servers = 3;
    o.configure_mds = [s](ServerOptions& mds, const std::vector<DataServerInfo>& ds) {
        configure_flexfiles_mds(mds, ds, s);
    };
    return o;
}

// The layout store of export 1 under the default path (<RecoveryRoot>/flexfiles/).
inline fs::path layout_store(GaneshaServer& mds) {
    return mds.recovery_root() / "flexfiles" / "export-1.db";
}

// Where a data file of MDS fileid `fileid` made by the export of `identity` would be on data
// server `i` (model/naming.hpp), and where one of a store made before identities would be.
inline fs::path data_file_path(Cluster& c, unsigned i, std::uint64_t identity, std::uint64_t fileid,
                               std::uint32_t mirror) {
    return c.ds_info().at(i).export_path /
           flexfiles::fleet::data_file_name(identity, fileid, mirror);
}
inline fs::path legacy_data_file_path(Cluster& c, unsigned i, std::uint64_t fileid,
                                      std::uint32_t mirror) {
    return c.ds_info().at(i).export_path / flexfiles::fleet::legacy_data_file_name(fileid, mirror);
}

// The identity of export `export_id`'s layout store, from the MDS log ("... layout store
// PATH: identity HEX, ..."); 0 when not logged.
inline std::uint64_t store_identity(GaneshaServer& mds, unsigned export_id = 1) {
    const std::string log = mds.log_text();
    const std::string marker = "FLEXFILES export " + std::to_string(export_id) + " (";
    std::uint64_t out = 0;
    for (std::size_t at = log.find(marker); at != std::string::npos;
         at = log.find(marker, at + 1)) {
        const std::size_t eol = log.find('\n', at);
        const std::string line = log.substr(at, eol == std::string::npos ? eol : eol - at);
        const std::size_t id = line.find(": identity ");
        if (id != std::string::npos)
            out = flexfiles::fleet::parse_identity_hex(line.substr(id + 11, 16)).value_or(0);
    }
    return out;
}

struct DataFileOnDisk {
    unsigned ds = 0; // cluster index
    std::uint32_t mirror = 0;
    fs::path path;
};

// Every data file of `fileid` on every data server's export folder, in either form of name
// and of whichever export (or only of the export of `identity`, when given), by data server
// and mirror.
inline std::vector<DataFileOnDisk> data_files_on_disk(Cluster& c, std::uint64_t fileid,
                                                      std::optional<std::uint64_t> identity = {}) {
    std::vector<DataFileOnDisk> out;
    for (unsigned i = 0; i < c.ds_count(); ++i)
        for (const auto& e : fs::directory_iterator(c.ds_info()[i].export_path)) {
            const auto n = flexfiles::fleet::parse_data_file_name(e.path().filename().string());
            if (n && n->fileid == fileid && (!identity || n->identity == identity))
                out.push_back({i, n->mirror, e.path()});
        }
    std::sort(out.begin(), out.end(), [](const DataFileOnDisk& a, const DataFileOnDisk& b) {
        return a.ds != b.ds ? a.ds < b.ds : a.path < b.path;
    });
    return out;
}

// Every ff-* name in every data server's export folder.
inline std::set<std::string> all_data_files(Cluster& c) {
    std::set<std::string> out;
    for (unsigned i = 0; i < c.ds_count(); ++i)
        for (const auto& e : fs::directory_iterator(c.ds_info()[i].export_path))
            if (e.path().filename().string().rfind("ff-", 0) == 0)
                out.insert(c.ds_info()[i].name + "/" + e.path().filename().string());
    return out;
}

inline std::vector<std::uint8_t> read_whole(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), {});
}

template <class Pred>
bool eventually(Pred p, std::chrono::milliseconds limit, std::chrono::milliseconds step = 50ms) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
        if (p())
            return true;
        std::this_thread::sleep_for(step);
    }
    return p();
}

// Writes `data` at `offset` in chunks (NFSv3 WRITE, FILE_SYNC); every chunk must succeed.
inline void write_all(Nfs3Client& client, const Nfs3Fh& fh, std::uint64_t offset,
                      const std::vector<std::uint8_t>& data, std::size_t chunk = 64 * 1024) {
    for (std::size_t done = 0; done < data.size();) {
        const std::size_t n = std::min(chunk, data.size() - done);
        const std::vector<std::uint8_t> part(data.begin() + static_cast<std::ptrdiff_t>(done),
                                             data.begin() + static_cast<std::ptrdiff_t>(done + n));
        const auto w = client.write(fh, offset + done, part, Nfs3Stable::file_sync);
        ASSERT_EQ(w.status, Nfs3Status::ok) << "WRITE at " << offset + done;
        ASSERT_EQ(w.count, n);
        done += n;
    }
}

// Reads [offset, offset + size) back in chunks, stopping early at EOF.
inline std::vector<std::uint8_t> read_all(Nfs3Client& client, const Nfs3Fh& fh,
                                          std::uint64_t offset, std::size_t size,
                                          std::uint32_t chunk = 64 * 1024) {
    std::vector<std::uint8_t> out;
    while (out.size() < size) {
        const auto n = static_cast<std::uint32_t>(std::min<std::size_t>(chunk, size - out.size()));
        const auto r = client.read(fh, offset + out.size(), n);
        EXPECT_EQ(r.status, Nfs3Status::ok) << "READ at " << offset + out.size();
        if (r.status != Nfs3Status::ok)
            break;
        out.insert(out.end(), r.data.begin(), r.data.end());
        if (r.eof || r.data.empty())
            break;
    }
    return out;
}

// CREATE (UNCHECKED) through the MDS; the file's handle and fileid.
struct Created {
    Nfs3Fh fh;
    std::uint64_t fileid = 0;
};
inline Created create_file(Nfs3Client& client, const std::string& name) {
    const auto c = client.create(client.root(), name, 0644);
    EXPECT_EQ(c.status, Nfs3Status::ok) << "CREATE " << name;
    Created out;
    if (c.fh)
        out.fh = *c.fh;
    if (c.attr)
        out.fileid = c.attr->fileid;
    EXPECT_FALSE(out.fh.empty()) << "CREATE " << name << " returned no filehandle";
    return out;
}

// The MDS's log names a data server as "ds <Id> (<address>:<path>)"; Id = index + 1.
inline std::string ds_label(Cluster& c, unsigned index) {
    return "ds " + std::to_string(index + 1) + " (" + c.ds_info().at(index).address + ":";
}

// Waits until, after log offset `from`, a line of the MDS's log names data server `index`
// with one of `transitions` ("-> Up", "-> Suspect", "-> Down").
inline bool mds_logged_health(Cluster& c, unsigned index,
                              std::initializer_list<const char*> transitions, std::size_t from,
                              std::chrono::milliseconds limit) {
    const std::string who = ds_label(c, index);
    return eventually(
        [&] {
            const std::string log = c.mds().log_text().substr(from);
            for (std::size_t at = 0; (at = log.find(who, at)) != std::string::npos;) {
                const std::size_t end = log.find('\n', at);
                const std::string line = log.substr(at, end - at);
                for (const char* t : transitions)
                    if (line.find(t) != std::string::npos)
                        return true;
                at = end;
            }
            return false;
        },
        limit);
}

inline std::string joined(const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& l : lines)
        out += l + "\n";
    return out;
}

} // namespace mds_test
