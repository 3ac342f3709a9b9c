#!/usr/bin/python3
"""Writes the contending versions of the bench/sim clusters (docs/simulation.md, caveats): SimGrid's
<cluster> loopback is a fat pipe, so ranks of one node never contend there. Here every node is a
zone of one host per core whose backbone is a SHARED link of the node's memory bandwidth (every
transfer inside the node, and every transfer in or out of it, crosses it), and the node reaches the
network through its NIC, a SPLITDUPLEX link of the cluster's link bandwidth. Beyond the NICs each
platform keeps its original network: Yahoo's two leaf switches joined by 10 Gb/s uplinks, Cervino's
single switch backplane, the fat tree as non-blocking.

`oversub` has no fat-pipe original: a network that blocks, unlike the three above. 32 nodes of 16
cores (the fat tree's nodes: 20 GB/s memory, a 100 Gb/s NIC with 1 us of latency) in 4 leaf switches
of 8, each leaf joined to one spine by a 25 GB/s uplink (two 100 Gb/s ports), a quarter of what its
8 nodes' NICs can send (100 GB/s): 4:1 oversubscribed, as clusters built for many small jobs are
(racks whose leaf switches spend few ports on uplinks). Inside a leaf the network does not block;
across leaves, once more than two nodes of a leaf send out at once, each gets less than its NIC.
Latencies: 0.2 us for the leaf switch (crossed once per route, as on Yahoo) and for the spine (a
cut-through switch hop each), 0.5 us per uplink (the cable, its ports and the far leaf's hop), so a
path inside a leaf takes 2.5 us with the core links and one across leaves 3.7 us.

Hosts are named <cluster>-<node>-c<core>; the host files list one host per rank, sequential (rank r
on node r / cores) or cyclic (rank r on node r mod nodes). SMPI's MPI_COMM_TYPE_SHARED splits by host,
so with one host per core the shim cannot see the nodes itself: runs on these platforms set
COLLSHIM_TOPOLOGY to the placement the host file describes (smpi_common.py's topology()).

  bench/sim/make_contending_platforms.py     # rewrites platforms/*-contending.xml and hostfiles/
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import smpi_common as sim  # noqa: E402  (the platforms' nodes and cores, platform and host file paths)

# name: node memory bandwidth, NIC bandwidth and latency, core link latency
# (half of the fat-pipe platform's loopback latency: a transfer crosses two core links), the network
# beyond the NICs. A "leaves" network: the nodes of each range share a leaf switch; every route crosses the
# leaf-switch link once (a FATPIPE: its latency, no contention), and a route between leaves also its
# source leaf's uplink up, the spine (where spine_lat is given) and the destination leaf's uplink down
# (SPLITDUPLEX: each direction shared by the transfers that leave or enter the leaf). The nodes and cores
# per node are smpi_common.CLUSTERS' (NAME-contending).
NETWORKS = {
    "yahoo": dict(memory="10GBps", nic="125MBps", nic_lat="25us", core_lat="0.25us",
                  network="leaves", leaves=[range(0, 5), range(5, 16)], uplink="1.25GBps", uplink_lat="5us",
                  leaf_lat="2us"),
    "cervino": dict(memory="40GBps", nic="5GBps", nic_lat="2us", core_lat="0.25us",
                    network="switch", switch="25GBps", switch_lat="0.5us"),
    "fattree": dict(memory="20GBps", nic="12.5GBps", nic_lat="1us", core_lat="0.15us",
                    network="non_blocking"),
    "oversub": dict(memory="20GBps", nic="12.5GBps", nic_lat="1us", core_lat="0.15us",
                    network="leaves", leaves=[range(i, i + 8) for i in range(0, 32, 8)], uplink="25GBps",
                    uplink_lat="0.5us", leaf_lat="0.2us", spine_lat="0.2us"),
}
CLUSTERS = {name: dict(nodes=sim.CLUSTERS[f"{name}-contending"].nodes, cores=sim.CLUSTERS[f"{name}-contending"].cores,
                       **network) for name, network in NETWORKS.items()}


def platform(name, c):
    out = ["<?xml version='1.0'?>", '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
           f"<!-- {name} with contending nodes, written by bench/sim/make_contending_platforms.py: {c['nodes']} "
           f"nodes x {c['cores']} cores; each node's cores share a {c['memory']} memory link (SHARED), the "
           f"node's NIC is a {c['nic']} SPLITDUPLEX link. -->",
           '<platform version="4.1">', f'  <zone id="{name}-contending" routing="Full">']
    for n in range(c["nodes"]):
        out.append(f'    <cluster id="{name}-{n}" prefix="{name}-{n}-c" suffix="" radical="0-{c["cores"] - 1}" '
                   f'speed="10Gf" bw="{c["memory"]}" lat="{c["core_lat"]}" sharing_policy="SPLITDUPLEX" '
                   f'bb_bw="{c["memory"]}" bb_lat="0us" bb_sharing_policy="SHARED" router_id="{name}-{n}-router"/>')
    for n in range(c["nodes"]):
        out.append(f'    <link id="{name}-{n}-nic" bandwidth="{c["nic"]}" latency="{c["nic_lat"]}" '
                   f'sharing_policy="SPLITDUPLEX"/>')
    leaf_names = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[:len(c.get("leaves", []))]
    if c["network"] == "leaves":
        for leaf in leaf_names:
            out.append(f'    <link id="uplink{leaf}" bandwidth="{c["uplink"]}" latency="{c["uplink_lat"]}" '
                       f'sharing_policy="SPLITDUPLEX"/>')
        out.append(f'    <link id="leaf-switch" bandwidth="100GBps" latency="{c["leaf_lat"]}" sharing_policy="FATPIPE"/>')
        if "spine_lat" in c:
            out.append(f'    <link id="spine" bandwidth="100GBps" latency="{c["spine_lat"]}" sharing_policy="FATPIPE"/>')
    if c["network"] == "switch":
        out.append(f'    <link id="switch" bandwidth="{c["switch"]}" latency="{c["switch_lat"]}" sharing_policy="SHARED"/>')
    for a in range(c["nodes"]):
        for b in range(c["nodes"]):
            if a == b:
                continue
            links = [(f"{name}-{a}-nic", "UP")]
            if c["network"] == "leaves":
                leaf = lambda n: next(name for name, r in zip(leaf_names, c["leaves"]) if n in r)
                links.append(("leaf-switch", None))
                if leaf(a) != leaf(b):
                    links += [(f"uplink{leaf(a)}", "UP"), *([("spine", None)] if "spine_lat" in c else []),
                              (f"uplink{leaf(b)}", "DOWN")]
            if c["network"] == "switch":
                links.append(("switch", None))
            links.append((f"{name}-{b}-nic", "DOWN"))
            out.append(f'    <zoneRoute src="{name}-{a}" dst="{name}-{b}" gw_src="{name}-{a}-router" '
                       f'gw_dst="{name}-{b}-router" symmetrical="NO">')
            for link, direction in links:
                out.append(f'      <link_ctn id="{link}"' + (f' direction="{direction}"' if direction else "") + "/>")
            out.append("    </zoneRoute>")
    out += ["  </zone>", "</platform>", ""]
    return "\n".join(out)


def hostfile(name, c, mapping):
    hosts = []
    for rank in range(c["nodes"] * c["cores"]):
        if mapping == "sequential":
            node, core = divmod(rank, c["cores"])
        else:
            core, node = divmod(rank, c["nodes"])
        hosts.append(f"{name}-{node}-c{core}")
    return "\n".join(hosts) + "\n"


def main():
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    for name, c in CLUSTERS.items():
        path = sim.platform_file(f"{name}-contending")
        with open(path, "w") as f:
            f.write(platform(name, c))
        print(path)
        for mapping in ("sequential", "cyclic"):
            path = sim.hostfile(f"{name}-contending", mapping)
            with open(path, "w") as f:
                f.write(hostfile(name, c, mapping))
            print(path)


if __name__ == "__main__":
    main()
