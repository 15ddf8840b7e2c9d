// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Operation 77 LAYOUT_WCC in Ganesha's compound dispatch, observed on the wire: every
// status the handler decides before the FSAL sees the body (RFC 9766 section 3.5), the
// op's place in the minor versions, its line in Ganesha's statistics over dbus, and the
// FSAL API bump that keeps stock-built modules out.
//
// The MDS has two exports: /ff (FLEXFILES over VFS, three data servers) and /vfs (plain
// VFS, which does not implement LAYOUT_WCC). The statuses that need a granted layout (OK,
// OLD_STATEID, another client's stateid, BADXDR from the FSAL) live with the layout tests.
#include "client/compound.hpp"
#include "client/session.hpp"
#include "ff_harness/harness.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <random>
#include <regex>

using namespace flexfiles::harness;
using namespace flexfiles::client;

namespace {

// Index into the MDS's exports and its Export_Id.
constexpr std::size_t kFlexExport = 0;
constexpr std::size_t kVfsExport = 1;
constexpr std::uint16_t kFlexExportId = 1;
constexpr std::uint16_t kVfsExportId = 2;

class Op77Dispatch : public ::testing::Test {
protected:
    void SetUp() override {
        ClusterOptions options;
        options.with_dbus = true;
        options.configure_mds = [](ServerOptions& mds, const std::vector<DataServerInfo>& ds) {
            mds.exports[kFlexExport].pseudo = "/ff";
            mds.exports[kFlexExport].fsal = flexfiles_fsal_block(ds);
            ExportSpec vfs;
            vfs.export_id = kVfsExportId;
            vfs.pseudo = "/vfs";
            mds.exports.push_back(vfs);
        };
        cluster_ = std::make_unique<Cluster>(options);

        // The namespace as the tests need it, made on the exports' disks directly.
        for (std::uint16_t id : {kFlexExportId, kVfsExportId}) {
            const auto root = cluster_->mds().export_path(id);
            std::filesystem::create_directory(root / "dir");
            std::filesystem::create_symlink("dir", root / "link");
            std::ofstream(root / "file") << "bytes";
        }
        session_ = open_session(2);
    }

    std::unique_ptr<Session> open_session(uint32_t minor) {
        SessionOptions o;
        o.host = cluster_->mds().address();
        o.port = cluster_->mds().nfs_port();
        o.minor_version = minor;
        return Session::open(o);
    }

    FileHandle fh_of(const std::string& path) {
        Compound c;
        c.walk(path).getfh();
        CompoundResult r = session_->send(c);
        r.check("walk " + path);
        return r.fh(c.size() - 1);
    }

    // PUTFH (unless fh is empty), LAYOUT_WCC; returns LAYOUT_WCC's status.
    std::optional<uint32_t> layout_wcc(Session& s, const FileHandle& fh, const stateid4& stateid,
                                       layouttype4 type, std::vector<char> body = {}) {
        Compound c;
        if (!fh.empty())
            c.putfh(fh);
        nfs_argop4 op{};
        op.argop = NFS4_OP_LAYOUT_WCC;
        LAYOUT_WCC4args& args = op.nfs_argop4_u.oplayout_wcc;
        args.lowa_stateid = stateid;
        args.lowa_type = type;
        args.lowa_body.lowa_body_len = static_cast<u_int>(body.size());
        args.lowa_body.lowa_body_val = body.empty() ? nullptr : c.keep(body);
        c.typed(op, "LAYOUT_WCC");
        CompoundResult r = s.send(c);
        EXPECT_TRUE(r.replied()) << r.error;
        return r.status_of(c.size() - 1);
    }

    std::unique_ptr<Cluster> cluster_;
    std::unique_ptr<Session> session_;
};

stateid4 random_stateid() {
    std::mt19937 gen(77);
    stateid4 s{};
    s.seqid = 1;
    for (auto& b : s.other)
        b = static_cast<char>(gen());
    return s;
}

} // namespace

TEST_F(Op77Dispatch, IllegalInMinorVersion1) {
    auto v41 = open_session(1);
    Compound c;
    c.walk("/ff/file");
    nfs_argop4 op{};
    op.argop = NFS4_OP_LAYOUT_WCC;
    op.nfs_argop4_u.oplayout_wcc.lowa_type = LAYOUT4_FLEX_FILES;
    c.typed(op, "LAYOUT_WCC");
    CompoundResult r = v41->send(c);
    ASSERT_TRUE(r.replied()) << r.error;
    EXPECT_EQ(r.status_of(c.size() - 1), NFS4ERR_OP_ILLEGAL);
    EXPECT_EQ(r.status, static_cast<uint32_t>(NFS4ERR_OP_ILLEGAL));
}

TEST_F(Op77Dispatch, Op76StaysIllegalInMinorVersion2) {
    Compound c;
    c.putrootfh().raw(76, {}, "op 76");
    CompoundResult r = session_->send(c);
    ASSERT_TRUE(r.replied()) << r.error;
    EXPECT_EQ(r.status_of(1), NFS4ERR_OP_ILLEGAL);
}

TEST_F(Op77Dispatch, NoFilehandle) {
    EXPECT_EQ(layout_wcc(*session_, {}, random_stateid(), LAYOUT4_FLEX_FILES),
              NFS4ERR_NOFILEHANDLE);
}

TEST_F(Op77Dispatch, DirectoryIsIsdir) {
    EXPECT_EQ(layout_wcc(*session_, fh_of("/ff/dir"), random_stateid(), LAYOUT4_FLEX_FILES),
              NFS4ERR_ISDIR);
}

TEST_F(Op77Dispatch, SymlinkIsWrongType) {
    EXPECT_EQ(layout_wcc(*session_, fh_of("/ff/link"), random_stateid(), LAYOUT4_FLEX_FILES),
              NFS4ERR_WRONG_TYPE);
}

TEST_F(Op77Dispatch, FilesLayoutTypeOnFlexfilesExportIsUnknown) {
    EXPECT_EQ(layout_wcc(*session_, fh_of("/ff/file"), random_stateid(), LAYOUT4_NFSV4_1_FILES),
              NFS4ERR_UNKNOWN_LAYOUTTYPE);
}

TEST_F(Op77Dispatch, SpecialOrUnknownStateidIsBadStateid) {
    const FileHandle file = fh_of("/ff/file");
    EXPECT_EQ(layout_wcc(*session_, file, anonymous_stateid(), LAYOUT4_FLEX_FILES),
              NFS4ERR_BAD_STATEID)
        << "the all-zero special stateid names no layout";
    EXPECT_EQ(layout_wcc(*session_, file, random_stateid(), LAYOUT4_FLEX_FILES),
              NFS4ERR_BAD_STATEID)
        << "a stateid this server never issued";
}

TEST_F(Op77Dispatch, ExportWithoutLayoutWccIsNotsupp) {
    const FileHandle file = fh_of("/vfs/file");
    // OPTIONAL per export: NOTSUPP whatever the layout type or the stateid.
    EXPECT_EQ(layout_wcc(*session_, file, random_stateid(), LAYOUT4_FLEX_FILES), NFS4ERR_NOTSUPP);
    EXPECT_EQ(layout_wcc(*session_, file, random_stateid(), LAYOUT4_NFSV4_1_FILES),
              NFS4ERR_NOTSUPP);
}

// Ganesha's per-op statistics (org.ganesha.nfsd.exportstats.GetFastOPS) name op 77 and
// count every LAYOUT_WCC the server executed.
TEST_F(Op77Dispatch, CountedByNameInDbusStatistics) {
    const FileHandle file = fh_of("/vfs/file");
    constexpr int kSent = 3;
    for (int i = 0; i < kSent; ++i)
        layout_wcc(*session_, file, random_stateid(), LAYOUT4_FLEX_FILES);

    ASSERT_NE(cluster_->dbus(), nullptr);
    const CommandResult reply =
        cluster_->dbus()->send("org.ganesha.nfsd", "/org/ganesha/nfsd/ExportMgr",
                               "org.ganesha.nfsd.exportstats.GetFastOPS");
    ASSERT_TRUE(reply.ok()) << reply.output;
    // dbus-send prints the op name, then its count, each on its own line.
    const std::regex counted("string \"LAYOUT_WCC\"\\s+uint64 (\\d+)");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(reply.output, m, counted)) << reply.output;
    EXPECT_EQ(std::stoi(m[1].str()), kSent);
}

// A module built for stock Ganesha 4.3 (FSAL API 11.0) is refused at load with a log line;
// the server keeps serving its other exports.
TEST(Op77FsalApi, StockBuiltModuleIsRefusedAtLoad) {
    ServerOptions options = ServerOptions::metadata_server("mds", "127.0.0.77", 1);
    ExportSpec old_api;
    old_api.export_id = 2;
    old_api.pseudo = "/old";
    old_api.fsal = "FSAL { Name = OLDAPI; }";
    options.exports.push_back(old_api);
    options.allow_config_errors = true;
    GaneshaServer server(options);

    EXPECT_TRUE(server.log_contains(
        "FSAL \"OLDAPI\" failed to register because of version mismatch core = 12.0, fsal = 11.0"));
    const auto v4 =
        rpc_null_ping(server.address(), server.nfs_port(), flexfiles::harness::kNfsProgram, 4,
                      std::chrono::milliseconds(2000));
    EXPECT_TRUE(v4.ok) << v4.error;
}
