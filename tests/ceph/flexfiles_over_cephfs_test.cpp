// SPDX-License-Identifier: LGPL-3.0-or-later
//
// FLEXFILES stacked over FSAL_CEPH: the namespace is a CephFS, the bytes are on the NFSv3
// data servers. A pNFS client writes through its layout; the file is then on the CephFS,
// where a libcephfs client (behind the MDS's back) finds it, holding no bytes itself (as
// over VFS: docs/design.md) and its data-file map as an extended attribute
// (Map_In_Namespace), and the MDS answers GETATTR with the size the client wrote. Clients
// see the file's other extended attributes (RFC 8276) but neither see nor change the map.
//
// Cluster: a single-node Ceph (CephCluster), 3 NFSv3 data servers, one MDS exporting "/"
// of the CephFS at /ff (FLEXFILES over CEPH, Mirrors = 2, Map_In_Namespace = true); our
// NFSv4.2 pNFS client.
#include "ceph_support.hpp"
#include "client/flex_file.hpp"
#include "client/pnfs_client.hpp"
#include "model/map_text.hpp"

using namespace flexfiles::ceph_test;
namespace fc = flexfiles::client;

namespace {

using FlexfilesOverCephfs = CephFlexfilesCluster;

} // namespace

TEST_F(FlexfilesOverCephfs, AFileWrittenThroughItsLayoutIsOnTheCephfsAndTheMdsAnswersItsSize) {
    const auto data = bytes(1 << 20, 5);
    auto s = open_session();
    fc::PnfsClient pnfs(*s);
    auto f = fc::FlexFile::open(pnfs, "/ff/written", create_new());
    ASSERT_EQ(f->layoutget(LAYOUTIOMODE4_RW), static_cast<std::uint32_t>(NFS4_OK));
    ASSERT_EQ(f->layout().mirrors.size(), 2u);
    f->write(0, data);
    ASSERT_TRUE(f->commit().ok());
    EXPECT_EQ(f->layoutcommit(), std::optional<std::uint64_t>(data.size()));
    f->layoutreturn(false);
    f->close();

    CephClient behind(*ceph_);
    EXPECT_EQ(behind.size_of("/written"), std::optional<std::uint64_t>(0))
        << "the namespace object is on the CephFS, its bytes on the data servers";
    const auto text = behind.xattr("/written", "user.flexfiles.map");
    ASSERT_TRUE(text.has_value()) << "the data-file map is on the namespace object";
    const auto parsed = flexfiles::mds::parse_map_text(*text);
    ASSERT_TRUE(parsed.map.has_value()) << parsed.error;
    EXPECT_EQ(parsed.map->files.size(), 2u);

    // Read back through a fresh layout.
    auto again = fc::FlexFile::open(pnfs, "/ff/written", {});
    EXPECT_EQ(again->getattr().attrs.size, std::optional<std::uint64_t>(data.size()));
    ASSERT_EQ(again->layoutget(LAYOUTIOMODE4_READ), static_cast<std::uint32_t>(NFS4_OK));
    EXPECT_EQ(again->read_all(0), data);
    again->layoutreturn(false);
    again->close();
}

namespace {

xattrkey4 key(Compound& c, std::string_view name) {
    xattrkey4 k{};
    k.utf8string_len = static_cast<u_int>(name.size());
    k.utf8string_val = c.keep(name);
    return k;
}

// PUTFH, then one NFSv4.2 xattr operation; the xattr op's status and result.
struct XattrReply {
    std::optional<std::uint32_t> status;
    CompoundResult result;
};
XattrReply xattr_op(Session& s, const FileHandle& fh, nfs_argop4 op, Compound& c) {
    c.putfh(fh).typed(op);
    XattrReply r{std::nullopt, s.send(c)};
    r.status = r.result.status_of(1);
    return r;
}

XattrReply getxattr(Session& s, const FileHandle& fh, std::string_view name) {
    Compound c;
    nfs_argop4 op{};
    op.argop = NFS4_OP_GETXATTR;
    op.nfs_argop4_u.opgetxattr.gxa_name = key(c, name);
    return xattr_op(s, fh, op, c);
}

XattrReply setxattr(Session& s, const FileHandle& fh, std::string_view name,
                    std::string_view value) {
    Compound c;
    nfs_argop4 op{};
    op.argop = NFS4_OP_SETXATTR;
    op.nfs_argop4_u.opsetxattr.sxa_option = SETXATTR4_EITHER;
    op.nfs_argop4_u.opsetxattr.sxa_key = key(c, name);
    op.nfs_argop4_u.opsetxattr.sxa_value.utf8string_len = static_cast<u_int>(value.size());
    op.nfs_argop4_u.opsetxattr.sxa_value.utf8string_val = c.keep(value);
    return xattr_op(s, fh, op, c);
}

XattrReply removexattr(Session& s, const FileHandle& fh, std::string_view name) {
    Compound c;
    nfs_argop4 op{};
    op.argop = NFS4_OP_REMOVEXATTR;
    op.nfs_argop4_u.opremovexattr.rxa_name = key(c, name);
    return xattr_op(s, fh, op, c);
}

std::vector<std::string> listxattrs(Session& s, const FileHandle& fh) {
    Compound c;
    nfs_argop4 op{};
    op.argop = NFS4_OP_LISTXATTR;
    op.nfs_argop4_u.oplistxattr.lxa_cookie = 0;
    op.nfs_argop4_u.oplistxattr.lxa_maxcount = 65536;
    XattrReply r = xattr_op(s, fh, op, c);
    EXPECT_EQ(r.status, std::optional<std::uint32_t>(NFS4_OK));
    std::vector<std::string> out;
    if (r.status != std::optional<std::uint32_t>(NFS4_OK))
        return out;
    const LISTXATTR4resok& ok = r.result.op(1).res.nfs_resop4_u.oplistxattr.LISTXATTR4res_u.resok4;
    for (count4 i = 0; i < ok.lxr_names.xl4_count; i++)
        out.emplace_back(ok.lxr_names.xl4_entries[i].utf8string_val,
                         ok.lxr_names.xl4_entries[i].utf8string_len);
    return out;
}

} // namespace

TEST_F(FlexfilesOverCephfs, ClientsSeeAFilesExtendedAttributesButNeverItsMap) {
    auto s = open_session();
    fc::PnfsClient pnfs(*s);
    auto f = fc::FlexFile::open(pnfs, "/ff/labelled", create_new());
    ASSERT_EQ(f->layoutget(LAYOUTIOMODE4_RW), static_cast<std::uint32_t>(NFS4_OK));
    f->write(0, bytes(4096, 1));
    f->layoutreturn(false);
    const FileHandle fh = f->fh();

    EXPECT_EQ(setxattr(*s, fh, "comment", "kept").status, std::optional<std::uint32_t>(NFS4_OK));
    EXPECT_EQ(getxattr(*s, fh, "comment").status, std::optional<std::uint32_t>(NFS4_OK));
    const auto names = listxattrs(*s, fh);
    EXPECT_NE(std::find(names.begin(), names.end(), "comment"), names.end());
    EXPECT_EQ(std::find(names.begin(), names.end(), "flexfiles.map"), names.end())
        << "LISTXATTRS shows the map";

    EXPECT_EQ(getxattr(*s, fh, "flexfiles.map").status,
              std::optional<std::uint32_t>(NFS4ERR_NOXATTR));
    EXPECT_EQ(setxattr(*s, fh, "flexfiles.map", "flexfiles-map 1\n").status,
              std::optional<std::uint32_t>(NFS4ERR_PERM));
    EXPECT_EQ(removexattr(*s, fh, "flexfiles.map").status,
              std::optional<std::uint32_t>(NFS4ERR_PERM));
    EXPECT_EQ(setxattr(*s, fh, "flexfiles.other", "x").status,
              std::optional<std::uint32_t>(NFS4ERR_PERM));
    f->close();

    // The map is whole and the file still reads through a new layout.
    CephClient behind(*ceph_);
    const auto text = behind.xattr("/labelled", "user.flexfiles.map");
    ASSERT_TRUE(text.has_value());
    EXPECT_TRUE(flexfiles::mds::parse_map_text(*text).map.has_value());
    auto again = fc::FlexFile::open(pnfs, "/ff/labelled", {});
    ASSERT_EQ(again->layoutget(LAYOUTIOMODE4_READ), static_cast<std::uint32_t>(NFS4_OK));
    EXPECT_EQ(again->read_all(0), bytes(4096, 1));
    again->layoutreturn(false);
    again->close();
}

// A crash: the MDS is killed with an RW layout out, and starts again (its node id, its
// layout store and the clients' records in RADOS are where they were). Before serving, it
// fences the layouts its previous instance handed out, and the new owners are on the
// namespace object too: new layouts carry them and write; the old one does not.
TEST_F(FlexfilesOverCephfs, ARestartAfterACrashFencesTheOldLayoutsOnTheNamespaceToo) {
    const auto first = bytes(8192, 1);
    auto s = open_session();
    fc::PnfsClient pnfs(*s);
    auto held = fc::FlexFile::open(pnfs, "/ff/crashed", create_new());
    ASSERT_EQ(held->layoutget(LAYOUTIOMODE4_RW), static_cast<std::uint32_t>(NFS4_OK));
    ASSERT_TRUE(held->try_write(0, first, fc::nfs3::Stable::file_sync).ok());

    GaneshaServer& mds = cluster_->mds();
    const std::size_t before = mds.log_offset();
    const auto killed_at = std::chrono::steady_clock::now();
    ASSERT_TRUE(mds.signal(SIGKILL));
    mds.stop();
    mds.start();
    const auto answering = std::chrono::steady_clock::now();
    CephCluster::wait_out_grace(mds, before);
    std::cout
        << "[ observed ] killed MDS on CephFS answering again after "
        << std::chrono::duration_cast<std::chrono::milliseconds>(answering - killed_at).count()
        << " ms, out of grace after "
        << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 killed_at)
               .count()
        << " ms" << std::endl;
    EXPECT_TRUE(
        mds.log_contains("1 file(s) were under RW layouts of the previous instance", before));

    EXPECT_FALSE(held->try_write(0, bytes(8192, 2), fc::nfs3::Stable::file_sync).ok())
        << "the previous instance's layout still writes";

    auto again = open_session();
    fc::PnfsClient pnfs2(*again);
    auto f = fc::FlexFile::open(pnfs2, "/ff/crashed", {});
    ASSERT_EQ(f->layoutget(LAYOUTIOMODE4_RW), static_cast<std::uint32_t>(NFS4_OK));
    EXPECT_EQ(f->read_all(0), first) << "what was acknowledged before the crash";
    const fc::IoOutcome w = f->try_write(0, bytes(8192, 3), fc::nfs3::Stable::file_sync);
    EXPECT_TRUE(w.ok()) << "a new layout writes: " << w.describe();
    f->layoutreturn(false);
    f->close();
}
