// SPDX-License-Identifier: LGPL-3.0-or-later
//
// FLEXFILES stacked over FSAL_CEPH: the namespace is a CephFS, the bytes are on the NFSv3
// data servers. A pNFS client writes through its layout; the file is then on the CephFS,
// where a libcephfs client (behind the MDS's back) finds it, holding no bytes itself (as
// over VFS: docs/design.md), and the MDS answers GETATTR with the size the client wrote.
//
// Cluster: a single-node Ceph (CephCluster), 3 NFSv3 data servers, one MDS exporting "/"
// of the CephFS at /ff (FLEXFILES over CEPH, Mirrors = 2); our NFSv4.2 pNFS client.
#include "ceph_support.hpp"
#include "client/flex_file.hpp"
#include "client/pnfs_client.hpp"

using namespace flexfiles::ceph_test;
namespace fc = flexfiles::client;

namespace {

using FlexfilesOverCephfs = CephFlexfilesCluster;

fc::FlexOpenOptions create_new() {
    fc::FlexOpenOptions o;
    o.create = true;
    o.truncate = true;
    return o;
}

std::vector<char> bytes(std::size_t n, std::uint8_t seed) {
    const auto p = pattern(n, seed);
    return std::vector<char>(p.begin(), p.end());
}

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

    // Read back through a fresh layout.
    auto again = fc::FlexFile::open(pnfs, "/ff/written", {});
    EXPECT_EQ(again->getattr().attrs.size, std::optional<std::uint64_t>(data.size()));
    ASSERT_EQ(again->layoutget(LAYOUTIOMODE4_READ), static_cast<std::uint32_t>(NFS4_OK));
    EXPECT_EQ(again->read_all(0), data);
    again->layoutreturn(false);
    again->close();
}
