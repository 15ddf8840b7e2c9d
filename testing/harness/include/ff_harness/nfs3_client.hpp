// SPDX-License-Identifier: LGPL-3.0-or-later
//
// A small synchronous NFSv3 client for tests, on libnfs's raw RPC layer: every call returns
// the reply as the server sent it, post-op and pre-op attributes included (libnfs's
// high-level API hides the WRITE reply's wcc_data). libnfs's headers stay out of this one.
//
// Errors: an NFS status is data (each result has `status`); a transport failure (no
// connection, timeout, garbage) throws Nfs3TransportError.
#pragma once

#include "model/nfs3.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace flexfiles::harness {

// The NFSv3 values are model/nfs3.hpp's (flexfiles::nfs3), shared with the FSAL and the
// tools; these are the names the tests know them by. Attributes are as the server sent them.
using Nfs3Status = nfs3::Status;
using Nfs3Time = nfs3::Time;
using Nfs3Type = nfs3::Ftype;
using Nfs3Attr = nfs3::Fattr; // fattr3
using Nfs3Stable = nfs3::StableHow;
using Nfs3SetAttrs = nfs3::SetAttrs; // what SETATTR changes; unset fields stay as they are

struct Nfs3Fh {
    std::vector<std::uint8_t> bytes;
    bool empty() const { return bytes.empty(); }
    friend bool operator==(const Nfs3Fh&, const Nfs3Fh&) = default;
};

struct Nfs3GetattrResult {
    Nfs3Status status = Nfs3Status::serverfault;
    Nfs3Attr attr; // valid when status == ok
};

struct Nfs3LookupResult {
    Nfs3Status status = Nfs3Status::serverfault;
    Nfs3Fh fh;
    std::optional<Nfs3Attr> attr;
    std::optional<Nfs3Attr> dir_attr;
};

struct Nfs3CreateResult {
    Nfs3Status status = Nfs3Status::serverfault;
    std::optional<Nfs3Fh> fh; // the server may omit it
    std::optional<Nfs3Attr> attr;
    nfs3::Wcc dir_wcc;
};

struct Nfs3WriteResult {
    Nfs3Status status = Nfs3Status::serverfault;
    nfs3::Wcc file_wcc; // present on success and on failure
    std::uint32_t count = 0;
    Nfs3Stable committed = Nfs3Stable::unstable;
    nfs3::WriteVerf verf{};
};

struct Nfs3ReadResult {
    Nfs3Status status = Nfs3Status::serverfault;
    std::optional<Nfs3Attr> attr;
    std::vector<std::uint8_t> data;
    bool eof = false;
};

struct Nfs3CommitResult {
    Nfs3Status status = Nfs3Status::serverfault;
    nfs3::Wcc file_wcc;
    nfs3::WriteVerf verf{};
};

struct Nfs3SetattrResult {
    Nfs3Status status = Nfs3Status::serverfault;
    nfs3::Wcc obj_wcc;
};

struct Nfs3RemoveResult {
    Nfs3Status status = Nfs3Status::serverfault;
    nfs3::Wcc dir_wcc;
};

struct Nfs3Credentials {
    std::uint32_t uid = 0;
    std::uint32_t gid = 0;
};

class Nfs3TransportError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class Nfs3Client {
public:
    // url: nfs://ADDR/PATH?nfsport=N&mountport=M. Both ports are required: the servers
    // share one rpcbind and overwrite each other's registrations, so no portmapper lookup.
    // MOUNTs PATH (an export's Path) over TCP, then connects to NFS. Throws
    // Nfs3TransportError (connection or MOUNT failure) or std::invalid_argument (bad URL).
    explicit Nfs3Client(const std::string& url, Nfs3Credentials creds = {},
                        std::chrono::milliseconds timeout = std::chrono::seconds(10));
    ~Nfs3Client();
    Nfs3Client(const Nfs3Client&) = delete;
    Nfs3Client& operator=(const Nfs3Client&) = delete;

    const Nfs3Fh& root() const;
    const std::string& server() const;
    // AUTH_SYS identity for the following calls.
    void set_credentials(Nfs3Credentials creds);
    // Drops the connection and mounts again (after a server restart).
    void reconnect();

    Nfs3GetattrResult getattr(const Nfs3Fh& fh);
    Nfs3LookupResult lookup(const Nfs3Fh& dir, const std::string& name);
    // UNCHECKED create with the given mode (GUARDED if `guarded`).
    Nfs3CreateResult create(const Nfs3Fh& dir, const std::string& name, std::uint32_t mode = 0644,
                            bool guarded = false);
    Nfs3WriteResult write(const Nfs3Fh& fh, std::uint64_t offset,
                          const std::vector<std::uint8_t>& data,
                          Nfs3Stable stable = Nfs3Stable::file_sync);
    Nfs3ReadResult read(const Nfs3Fh& fh, std::uint64_t offset, std::uint32_t count);
    Nfs3CommitResult commit(const Nfs3Fh& fh, std::uint64_t offset = 0, std::uint32_t count = 0);
    Nfs3SetattrResult setattr(const Nfs3Fh& fh, const Nfs3SetAttrs& attrs);
    Nfs3RemoveResult remove(const Nfs3Fh& dir, const std::string& name);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace flexfiles::harness
