// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Path- and file-level helpers over a Session: what the CLI, tests and benchmarks use
// when they do not care about the exact compounds. All throw NfsError / TransportError
// (see compound.hpp) with the path in the message.
//
// I/O goes through the MDS (READ/WRITE on the open stateid). The pNFS path (LAYOUTGET,
// GETDEVICEINFO, NFSv3 I/O to the data servers, LAYOUT_WCC, LAYOUTCOMMIT/RETURN) will
// sit behind the same functions, falling back to these when no layout is granted.
#pragma once

#include "compound.hpp"
#include "session.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace flexfiles::client {

struct StatResult {
    FileHandle fh;
    Fattr attrs;
};

// PUTROOTFH, LOOKUP per component, GETFH, GETATTR in one compound.
StatResult stat_path(Session& s, std::string_view path, const AttrMask& attrs = stat_attrs());
FileHandle lookup_path(Session& s, std::string_view path);
// PUTROOTFH, LOOKUP per component of the parent, REMOVE. Throws NfsError.
void remove_path(Session& s, std::string_view path);

struct OpenOptions {
    uint32_t access = OPEN4_SHARE_ACCESS_READ;
    uint32_t deny = OPEN4_SHARE_DENY_NONE;
    bool create = false;
    bool exclusive = false; // create with GUARDED4: NFS4ERR_EXIST if it exists
    bool truncate = false;  // create with size 0 (UNCHECKED4)
    uint32_t mode = 0644;   // for a created file
};

struct OpenFile {
    std::string path;
    FileHandle fh;
    stateid4 stateid{};
    Fattr attrs; // size, change, times right after OPEN
};

OpenFile open_path(Session& s, std::string_view path, const OpenOptions& options = {});
void close_file(Session& s, OpenFile& f);

// One READ / WRITE each.
std::vector<char> read_file(Session& s, const OpenFile& f, uint64_t offset, uint32_t count,
                            bool* eof = nullptr);
uint32_t write_file(Session& s, const OpenFile& f, uint64_t offset, std::span<const char> data,
                    stable_how4 stable = FILE_SYNC4);

// Whole-range helpers, in chunks that fit the session's negotiated sizes.
std::vector<char> read_all(Session& s, const OpenFile& f);
void write_all(Session& s, const OpenFile& f, uint64_t offset, std::span<const char> data,
               stable_how4 stable = FILE_SYNC4);
uint32_t io_chunk_size(const Session& s);

// "/a/b/c" -> {"/a/b", "c"}; throws std::invalid_argument if there is no last component.
std::pair<std::string, std::string> split_parent(std::string_view path);

} // namespace flexfiles::client
