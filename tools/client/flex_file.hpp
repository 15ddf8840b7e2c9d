// SPDX-License-Identifier: LGPL-3.0-or-later
//
// A file through a pNFS flexible-files layout (RFC 8435 + RFC 9766), on a PnfsClient
// (pnfs_client.hpp: devices, data-server connections, recalls).
//
//   PnfsClient pnfs(*session);
//   auto f = FlexFile::open(pnfs, "/ff/data", {.create = true});
//   f->layoutget(LAYOUTIOMODE4_RW);                   // + GETDEVICEINFO per device (cached)
//   f->write(0, bytes);                               // NFSv3 WRITE to every mirror at once
//   f->commit();                                      // NFSv3 COMMIT per data file
//   WccGetattr g = f->send_layout_wcc_and_getattr();  // PUTFH, LAYOUT_WCC, GETATTR
//   f->layoutcommit();
//   f->layoutreturn();                                // ff_layoutreturn4: errors + stats
//   f->close();
//
// Every NFSv3 reply's post-operation attributes are remembered per data file (the newest
// by ctime, then mtime, then size); layout_wcc_body() turns them into the ff_layout_wcc4 of
// RFC 9766 section 3.7 with the Table 1 attributes, one ff_mirror_wcc4 per mirror and one
// ff_data_server_wcc4 per data file (its deviceid, stateid and filehandles from the
// layout). A data file the client has no attributes for is sent with an empty mask.
//
// Recalls: a FlexFile registers its layout with the PnfsClient's LayoutRecallTable, which
// the backchannel marks. The owner sees FlexFile::recalled() and returns the layout; I/O
// through a recalled layout throws LayoutRecalled.
//
// One data server per mirror, as the Linux client: a layout whose mirror stripes over
// several data servers decodes, but I/O through it throws std::runtime_error.
#pragma once

#include "file_ops.hpp"
#include "flex_layout.hpp"
#include "layout_wcc.hpp"
#include "nfs3.hpp"
#include "pnfs_client.hpp"

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace flexfiles::client {

// A data server I/O failed: an NFSv3 error or an RPC failure.
class DataServerError : public std::runtime_error {
public:
    DataServerError(const std::string& what, nfs3::Status status, RpcStatus rpc)
        : std::runtime_error(what), status_(status), rpc_(rpc) {}
    nfs3::Status status() const { return status_; }
    RpcStatus rpc_status() const { return rpc_; }

private:
    nfs3::Status status_;
    RpcStatus rpc_;
};

// I/O through a layout the server has recalled.
class LayoutRecalled : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct FlexOpenOptions {
    uint32_t access = OPEN4_SHARE_ACCESS_BOTH;
    bool create = false;
    bool truncate = false;  // with create: size 0
    bool exclusive = false; // with create: GUARDED4
    uint32_t mode = 0644;
};

// One data file of the layout and what this client knows about it.
struct FlexDataFile {
    std::size_t mirror = 0;
    std::size_t index = 0; // within the mirror
    FlexDataServer ds;     // from the layout
    UniversalAddress address;
    uint32_t rsize = 0; // from GETDEVICEINFO (0: unknown)
    uint32_t wsize = 0;
    std::optional<nfs3::Fattr> attrs; // newest post-operation attributes
    std::optional<nfs3::Verifier> write_verf;
    bool uncommitted = false; // UNSTABLE writes since the last COMMIT
    // Counters for ff_iostats4.
    uint64_t read_ops = 0, read_bytes = 0, write_ops = 0, write_bytes = 0;
    std::chrono::microseconds read_busy{0}, write_busy{0};
};

// The outcome of one NFSv3 call to one data file.
struct DataServerIo {
    std::size_t mirror = 0;
    std::size_t index = 0;
    uint32_t proc = 0; // nfs3::Proc
    uint64_t offset = 0;
    uint32_t length = 0;
    nfs3::CallOutcome outcome;
    uint32_t count = 0;
    std::optional<nfs3::Fattr> attrs; // post-op attributes of the reply

    bool ok() const { return outcome.ok(); }
};

struct IoOutcome {
    std::vector<DataServerIo> calls; // every call made, in order of completion per chunk
    bool ok() const;
    const DataServerIo* first_failure() const;
    std::string describe() const; // of the first failure, or "ok"
};

// LAYOUT_WCC (or not) + GETATTR through the MDS.
struct WccGetattr {
    std::optional<uint32_t> wcc_status; // LAYOUT_WCC's status; empty when not sent
    Fattr attrs;                        // GETATTR
    std::chrono::microseconds elapsed{0};
    int compounds = 0; // 2 when LAYOUT_WCC failed and GETATTR was sent again alone
};

// What the MDS GETATTR after LAYOUT_WCC asks for.
AttrMask wcc_getattr_attrs();

// Keeps in `slot` the newer of it and `attrs` (by ctime, then mtime, then size): replies
// to concurrent calls may arrive in any order.
void keep_newest(std::optional<nfs3::Fattr>& slot, const std::optional<nfs3::Fattr>& attrs);

// The ff_layout_wcc4 of RFC 9766 section 3.7 for `layout`: one ff_mirror_wcc4 per mirror,
// one ff_data_server_wcc4 per data server with the layout's (deviceid, stateid, fh_vers)
// and the Table 1 attributes of the matching FlexDataFile (by mirror and index), or an empty
// attribute mask when there is none or it has no attributes.
FlexLayoutWcc build_layout_wcc(const FlexLayout& layout, const std::vector<FlexDataFile>& files);

class FlexFile {
public:
    // OPEN (with `options`), GETFH, GETATTR. Throws NfsError / TransportError.
    static std::unique_ptr<FlexFile> open(PnfsClient& client, std::string_view path,
                                          const FlexOpenOptions& options = {});
    // Forgets the layout locally; sends nothing (call layoutreturn() and close()).
    ~FlexFile();
    FlexFile(const FlexFile&) = delete;
    FlexFile& operator=(const FlexFile&) = delete;

    const OpenFile& file() const { return file_; }
    const FileHandle& fh() const { return file_.fh; }

    // ---- Layout. ----
    // PUTFH, LAYOUTGET of the whole file; then GETDEVICEINFO for each device not cached.
    // Returns LAYOUTGET's status: NFS4_OK, or why no layout was granted
    // (NFS4ERR_LAYOUTUNAVAILABLE, NFS4ERR_LAYOUTTRYLATER, NFS4ERR_UNKNOWN_LAYOUTTYPE...).
    // Throws TransportError, or NfsError/XdrError when the layout or a device is unusable.
    uint32_t layoutget(uint32_t iomode = LAYOUTIOMODE4_RW);
    bool has_layout() const { return layout_.has_value(); }
    const FlexLayout& layout() const; // throws std::logic_error without one
    const std::vector<FlexDataFile>& data_files() const { return files_; }
    bool recalled() const { return recall_->recalled.load(); }

    // ---- NFSv3 I/O to the data servers. ----
    // Writes `data` at `offset` to every mirror in parallel (chunks of the smallest wsize,
    // up to PnfsOptions::chunks_in_flight per data file), remembering the post-op
    // attributes. Stops issuing after the first failed chunk; records failures for
    // LAYOUTERROR / LAYOUTRETURN.
    IoOutcome try_write(uint64_t offset, std::span<const char> data,
                        nfs3::Stable stable = nfs3::Stable::unstable);
    // The same; throws DataServerError describing the first failure.
    void write(uint64_t offset, std::span<const char> data,
               nfs3::Stable stable = nfs3::Stable::unstable);
    // One READ from a mirror's data file. Throws DataServerError.
    std::vector<char> read(uint64_t offset, uint32_t count, std::size_t mirror = 0,
                           bool* eof = nullptr);
    // READs from `mirror` until EOF.
    std::vector<char> read_all(std::size_t mirror = 0);
    // COMMIT every data file with uncommitted writes (all of them if `all`).
    IoOutcome commit(bool all = false);
    // GETATTR every data file (refreshes the remembered attributes).
    IoOutcome refresh_attrs();

    // ---- RFC 9766. ----
    FlexLayoutWcc layout_wcc() const; // throws std::logic_error without a layout
    std::vector<char> layout_wcc_body() const;
    // One compound: SEQUENCE, PUTFH, LAYOUT_WCC, GETATTR. If the server refuses
    // LAYOUT_WCC (the GETATTR is then not executed), a second compound PUTFH, GETATTR.
    // Throws NfsError when GETATTR fails, TransportError.
    WccGetattr send_layout_wcc_and_getattr(const AttrMask& attrs = wcc_getattr_attrs());
    // PUTFH, GETATTR only (what a client does without LAYOUT_WCC).
    WccGetattr getattr(const AttrMask& attrs = wcc_getattr_attrs());

    // ---- Closing the loop with the MDS. ----
    // LAYOUTCOMMIT with the last byte written and the newest data-file mtime; returns the
    // new size the server reports. Throws NfsError.
    std::optional<uint64_t> layoutcommit();
    // The recorded I/O errors and per-data-file statistics as an ff_layoutreturn4.
    FlexLayoutReturn return_report(bool with_stats = true) const;
    // LAYOUTERROR with the recorded errors (none recorded: nothing sent, NFS4_OK).
    // Returns its status (Ganesha 4.3 answers NFS4_OK without acting on it).
    uint32_t layouterror();
    // LAYOUTRETURN (FILE, whole file) with return_report(); forgets the layout. Throws
    // NfsError (the layout is kept then).
    void layoutreturn(bool with_stats = true);
    // CLOSE; a return-on-close layout is gone with it.
    void close();

    uint64_t last_write_end() const { return last_write_end_; } // 0: nothing written

private:
    FlexFile(PnfsClient& client, OpenFile file);
    void check_io_layout() const;
    std::vector<std::size_t> mirror_files(std::size_t mirror) const;
    void remember(FlexDataFile& f, const std::optional<nfs3::Fattr>& attrs);
    void record_error(const FlexDataFile& f, const DataServerIo& io, uint32_t opnum);
    uint32_t chunk_size(bool for_write) const;
    AuthSys credentials(const FlexDataFile& f) const;
    std::shared_ptr<nfs3::Client> server(const FlexDataFile& f);

    PnfsClient& client_;
    OpenFile file_;
    std::shared_ptr<LayoutRecallTable::Entry> recall_;
    std::optional<FlexLayout> layout_;
    std::vector<FlexDataFile> files_;
    std::vector<FlexIoError> errors_;
    uint64_t last_write_end_ = 0;
    std::chrono::steady_clock::time_point layout_since_{};
    bool open_ = true;
};

} // namespace flexfiles::client
