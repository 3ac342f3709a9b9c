#!/usr/bin/python3
"""A cost-model platform description (collshim-model predict --platform) derived from a bench/sim
platform file, as config/platforms/fattree-contending.yaml was written by hand. Two shapes:

Contending platforms (make_contending_platforms.py: one <cluster> per node, a private link per core
and a SHARED backbone, the node's memory; NIC and network links; a <zoneRoute> per pair of nodes):
- shm: latency = two core links and the backbone's, bandwidth = the backbone's (shared by the
  node's transfers);
- net: latency = the mean over node pairs of their path's (two core links, the backbones, every
  link of the route), bandwidth = the narrowest link of a route (the NIC here; the mean over pairs
  if they differ), shared by the transfers a NIC carries; a link beyond the NICs that cannot carry
  what the nodes on its two sides can send through it (an oversubscribed uplink) is named in a
  comment, since the model has no bandwidth there;
Fat-pipe platforms (bench/sim's fattree.xml, yahoo.xml, cervino.xml: <cluster>s of multi-core
hosts, a host per node, ranks of one node talking over its FATPIPE loopback):
- shm: the loopback's latency and bandwidth for every transfer, however many share it (a fat pipe
  never contends: the description lists the same point at τ = 1 and τ = 2^20);
- net: latency = the mean over node pairs of their route's (SimGrid 3.32's cluster routes: the
  source's private link up, the cluster's backbone, a <zoneRoute>'s links between clusters, the
  destination's backbone and private link down; in a FAT_TREE cluster one link per level climbed
  and descended), bandwidth = the narrowest link of a route, shared by a host's transfers (its
  private link, SPLITDUPLEX); network messages do not cross the loopback;
Both:
- the SMPI settings every bench/sim sweep runs with (bench/sim/tune.py): 1 us of receive overhead and
  none charged to nonblocking sends, eager below 64 KiB, transfers that wait for their receiver,
  untimed local work, and SimGrid 3.32's default size factors (smpi/lat-factor, smpi/bw-factor).
The model has one network latency: where paths differ (Yahoo's two leaf switches) the mean stands
for all of them, and the output says by how much they differ.

  bench/sim/describe_platform.py bench/sim/platforms/cervino-contending.xml [-o OUT.yaml]
  bench/sim/describe_platform.py bench/sim/platforms/yahoo.xml -o config/platforms/yahoo.yaml
"""
import argparse
import itertools
import re
import sys
import xml.etree.ElementTree as ET

UNITS = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def bandwidth_gbytes(text):
    match = re.fullmatch(r"([0-9.eE+-]+)\s*([kKMGT]?)Bps", text.strip())
    if not match:
        sys.exit(f"describe_platform: cannot read the bandwidth '{text}' (expected e.g. 12.5GBps)")
    return float(match.group(1)) * UNITS[match.group(2)] / 1e9


def latency_us(text):
    match = re.fullmatch(r"([0-9.eE+-]+)\s*(s|ms|us|ns)", text.strip())
    if not match:
        sys.exit(f"describe_platform: cannot read the latency '{text}' (expected e.g. 0.25us)")
    scale = {"s": 1e6, "ms": 1e3, "us": 1.0, "ns": 1e-3}[match.group(2)]
    return float(match.group(1)) * scale


# SimGrid 3.32's defaults for smpi/lat-factor and smpi/bw-factor (src/smpi/internals/smpi_config.cpp).
SMPI_SIZE_FACTORS = [(0, 2.01467, 0.812084), (257, 1.95341, 0.338112), (732, 1.9503, 0.341987),
                     (1426, 1.61075, 0.608902), (3484, 1.88101, 0.77493), (5776, 2.18796, 1.08739),
                     (9376, 2.59299, 0.58729), (15424, 3.48845, 0.697866), (65472, 11.6436, 0.940694)]


EXPECTED = ("expected a contending platform (make_contending_platforms.py: a <cluster> per node, its backbone the "
            "node's memory) or a fat-pipe one (<cluster>s of multi-core hosts with a loopback)")


def node_ids(cluster):
    """The host numbers of a cluster's radical ("0-4", "5-15", "0-3,8")."""
    ids = []
    for part in cluster.get("radical", "").split(","):
        first, _, last = part.partition("-")
        ids.extend(range(int(first), int(last or first) + 1))
    return ids


def fat_tree_levels_shared(a, b, down_counts):
    """Levels of a FAT_TREE cluster climbed from host a to reach a switch above host b too."""
    width = 1
    for level, count in enumerate(down_counts, start=1):
        width *= count
        if a // width == b // width:
            return level
    return len(down_counts)


def fat_tree_down_counts(cluster):
    """A FAT_TREE cluster's children per switch, level by level (its topo_parameters' second field);
    None for other clusters."""
    if cluster.get("topology") != "FAT_TREE":
        return None
    return [int(x) for x in cluster.get("topo_parameters").split(";")[1].split(",")]


def read_routes(path, zone, links):
    """The zone's <zoneRoute>s: (src, dst) -> their links."""
    routes = {}
    for route in zone.findall("zoneRoute"):
        names = [ctn.get("id") for ctn in route.findall("link_ctn")]
        if any(n not in links for n in names):
            sys.exit(f"describe_platform: {path}: the route from {route.get('src')} to {route.get('dst')} names an undeclared link")
        routes[(route.get("src"), route.get("dst"))] = [links[n] for n in names]
    return routes


def oversubscribed_links(zone, links):
    """Links that block: per link and direction (a SPLITDUPLEX link's UP and DOWN apart, another's both
    together; a FATPIPE never contends), the most the transfers crossing it could carry is the smaller
    of what their sources can send and what their destinations can take (each node at its fastest
    route's narrowest link, its NIC); where that exceeds the link's bandwidth, the link is
    oversubscribed. Returns [(link ids, GB/s, GB/s the nodes could move through each)]."""
    routes = [(r.get("src"), r.get("dst"), [(c.get("id"), c.get("direction")) for c in r.findall("link_ctn")])
              for r in zone.findall("zoneRoute")]
    route_bw = [min(bandwidth_gbytes(links[i].get("bandwidth")) for i, _ in hops) for _, _, hops in routes]
    sends, takes = {}, {}
    for (src, dst, _), bw in zip(routes, route_bw):
        sends[src], takes[dst] = max(sends.get(src, 0), bw), max(takes.get(dst, 0), bw)
    crossing = {}  # (link, direction) -> (sources, destinations)
    for src, dst, hops in routes:
        for link, direction in hops:
            policy = links[link].get("sharing_policy", "SHARED")
            if policy == "FATPIPE":
                continue
            sources, destinations = crossing.setdefault((link, direction if policy == "SPLITDUPLEX" else None), (set(), set()))
            sources.add(src)
            destinations.add(dst)
    groups = {}  # (bandwidth, what could cross) -> link ids in the file's order
    for (link, _), (sources, destinations) in crossing.items():
        bw = bandwidth_gbytes(links[link].get("bandwidth"))
        demand = min(sum(sends[n] for n in sources), sum(takes[n] for n in destinations))
        if demand > bw * (1 + 1e-9):
            ids = groups.setdefault((bw, demand), [])
            if link not in ids:
                ids.append(link)
    return [(ids, bw, demand) for (bw, demand), ids in groups.items()]


def latency_and_switches(switch_of_host, pairs, latencies):
    """The network latency and the switches, from every ordered pair of hosts' path latency: with more
    than one switch (hosts in order fill them, as a job's nodes do) the mean within a switch, and
    crossing two adds the mean difference; otherwise the mean over all pairs."""
    sizes = [len(list(group)) for _, group in itertools.groupby(switch_of_host)]
    same = [switch_of_host[a] == switch_of_host[b] for a, b in pairs]
    within = [l for l, s in zip(latencies, same) if s]
    across = [l for l, s in zip(latencies, same) if not s]
    if len(sizes) < 2 or len(sizes) != len(set(switch_of_host)) or not within or not across:
        return sum(latencies) / len(latencies), None
    latency = sum(within) / len(within)
    return latency, dict(sizes=[sizes[0]] if len(set(sizes)) == 1 else sizes, across=sum(across) / len(across) - latency)


def describe_fat_pipe(path, zone, clusters, links):
    sample = next(iter(clusters.values()))
    node_keys = ("core", "bw", "lat", "loopback_bw", "loopback_lat")
    for c in clusters.values():
        if any(c.get(k) is None for k in node_keys):
            sys.exit(f"describe_platform: {path}: cluster {c.get('id')} lacks one of {', '.join(node_keys)}; "
                     "expected multi-core hosts with a loopback")
        if tuple(c.get(k) for k in node_keys) != tuple(sample.get(k) for k in node_keys):
            sys.exit(f"describe_platform: {path}: cluster {c.get('id')} differs from {sample.get('id')} in its "
                     "nodes; the model describes one kind of node")
        if c.get("topology", "FLAT") not in ("FLAT", "FAT_TREE"):
            sys.exit(f"describe_platform: {path}: cluster {c.get('id')} has topology {c.get('topology')}; "
                     "expected FLAT or FAT_TREE")
    private_lat, private_bw = latency_us(sample.get("lat")), bandwidth_gbytes(sample.get("bw"))

    def climb(cluster):
        """The links from a host to its cluster's router or backbone (latency, narrowest bandwidth)."""
        if cluster.get("bb_bw") is None:
            return private_lat, private_bw
        return private_lat + latency_us(cluster.get("bb_lat", "0us")), min(private_bw, bandwidth_gbytes(cluster.get("bb_bw")))

    routes = read_routes(path, zone, links)
    hosts = [(cid, n) for cid, c in clusters.items() for n in node_ids(c)]
    down_counts = {cid: fat_tree_down_counts(c) for cid, c in clusters.items()}

    def switch(cid, n):
        """A host's switch: its cluster's, or in a fat tree its leaf."""
        return (cid, n // down_counts[cid][0] if down_counts[cid] else 0)

    latencies, bandwidths = [], []
    for (ca, a), (cb, b) in itertools.permutations(hosts, 2):
        if ca == cb:
            if down_counts[ca]:
                latency, bandwidth = 2 * fat_tree_levels_shared(a, b, down_counts[ca]) * private_lat, private_bw
            else:
                up_latency, bandwidth = climb(clusters[ca])  # the backbone is crossed once
                latency = up_latency + private_lat
        else:
            between = routes.get((ca, cb), routes.get((cb, ca)))  # a zone route serves both ways
            if between is None:
                sys.exit(f"describe_platform: {path}: no route from {ca} to {cb}")
            (lat_a, bw_a), (lat_b, bw_b) = climb(clusters[ca]), climb(clusters[cb])
            latency = lat_a + lat_b + sum(latency_us(l.get("latency")) for l in between)
            bandwidth = min([bw_a, bw_b] + [bandwidth_gbytes(l.get("bandwidth")) for l in between])
        latencies.append(latency)
        bandwidths.append(bandwidth)
    latency, switches = latency_and_switches([switch(c, n) for c, n in hosts],
                                             list(itertools.permutations(range(len(hosts)), 2)), latencies)
    return dict(shape="fat-pipe", clusters=len(hosts), cores=sample.get("core"),
                shm_latency=latency_us(sample.get("loopback_lat")), shm_bandwidth=bandwidth_gbytes(sample.get("loopback_bw")),
                net_latency=latency, net_latency_range=(min(latencies), max(latencies)),
                net_bandwidth=sum(bandwidths) / len(bandwidths), switches=switches)


def describe(path):
    try:
        zone = ET.parse(path).getroot().find("zone")
    except (ET.ParseError, OSError) as e:
        sys.exit(f"describe_platform: {path}: {e}")
    if zone is None:
        sys.exit(f"describe_platform: {path}: no <zone>; {EXPECTED}")
    clusters = {c.get("id"): c for c in zone.findall("cluster")}
    if clusters and all(c.get("loopback_bw") is not None and int(c.get("core", "1")) > 1 for c in clusters.values()):
        return describe_fat_pipe(path, zone, clusters, {l.get("id"): l for l in zone.findall("link")})
    links = {l.get("id"): l for l in zone.findall("link")}
    if len(clusters) < 2:
        sys.exit(f"describe_platform: {path}: {len(clusters)} <cluster>; {EXPECTED}")
    for c in clusters.values():
        if c.get("bb_bw") is None or c.get("lat") is None:
            sys.exit(f"describe_platform: {path}: cluster {c.get('id')} has no {'bb_bw' if c.get('lat') else 'lat'}; {EXPECTED}")
    sample = next(iter(clusters.values()))
    core_lat = latency_us(sample.get("lat"))
    memory_lat = latency_us(sample.get("bb_lat", "0us"))
    memory_bw = bandwidth_gbytes(sample.get("bb_bw"))
    for c in clusters.values():
        if (c.get("lat"), c.get("bb_lat", "0us"), c.get("bb_bw")) != (sample.get("lat"), sample.get("bb_lat", "0us"), sample.get("bb_bw")):
            sys.exit(f"describe_platform: {path}: cluster {c.get('id')} differs from {sample.get('id')}; "
                     "the model describes one kind of node")
    routes = read_routes(path, zone, links)
    latencies, bandwidths = [], []
    for a, b in itertools.permutations(clusters, 2):
        if (a, b) not in routes:
            sys.exit(f"describe_platform: {path}: no route from {a} to {b}")
        path_links = routes[(a, b)]
        if any(l.get("latency") is None or l.get("bandwidth") is None for l in path_links):
            sys.exit(f"describe_platform: {path}: a link from {a} to {b} lacks a latency or bandwidth")
        latencies.append(2 * core_lat + 2 * memory_lat + sum(latency_us(l.get("latency")) for l in path_links))
        bandwidths.append(min(bandwidth_gbytes(l.get("bandwidth")) for l in path_links))
    # Switches: nodes joined by the shortest path share one (union of those pairs).
    names = list(clusters)
    pairs = [(names.index(a), names.index(b)) for a, b in itertools.permutations(clusters, 2)]
    switch_of = list(range(len(names)))
    def root(i):
        while switch_of[i] != i:
            i = switch_of[i]
        return i
    for (a, b), latency in zip(pairs, latencies):
        if latency <= min(latencies) + 1e-9:
            switch_of[root(a)] = root(b)
    net_latency, switches = latency_and_switches([root(i) for i in range(len(names))], pairs, latencies)
    return dict(shape="contending", clusters=len(clusters), cores=sample.get("radical"), shm_latency=2 * core_lat + memory_lat,
                shm_bandwidth=memory_bw, net_latency=net_latency, switches=switches,
                net_latency_range=(min(latencies), max(latencies)), net_bandwidth=sum(bandwidths) / len(bandwidths),
                oversubscribed=oversubscribed_links(zone, links))


def yaml_text(name, path, d):
    low, high = d["net_latency_range"]
    spread = (f"# Paths between nodes take {low:g} to {high:g} us; the model has one network latency, so the\n"
              f"# description uses their mean over node pairs.\n" if high - low > 1e-9 else
              f"# Every path between nodes takes {low:g} us.\n")
    switches = ""
    if d.get("switches"):
        sizes = ", ".join(str(n) for n in d["switches"]["sizes"])
        spread = (f"# Paths between nodes take {low:g} to {high:g} us: the network latency is the mean within a switch,\n"
                  f"# crossing switches adds the mean difference (nodes fill the switches in order).\n")
        switches = f"switches: {{nodes_per_switch: [{sizes}], across_latency_us: {d['switches']['across']:.6g}}}\n"
    for ids, bw, demand in d.get("oversubscribed", []):
        spread += (f"# Oversubscribed {demand / bw:.3g}:1, not in the model: {', '.join(ids)} carry {bw:g} GB/s each way, while\n"
                   f"# the nodes on either side could send {demand:g} GB/s through each. The model has the latency of\n"
                   f"# crossing switches (switches:) but no bandwidth beyond a node's NIC: where more than\n"
                   f"# {bw / d['net_bandwidth']:.3g} NICs' worth of traffic crosses one of these links at once, it predicts too fast.\n")
    factors = "\n".join(f"    - {{from_bytes: {f}, latency_factor: {l}, bandwidth_factor: {b}}}" for f, l, b in SMPI_SIZE_FACTORS)
    shm_point = f"{{tau: 1, latency_us: {d['shm_latency']:.6g}, gbytes_per_s: {d['shm_bandwidth']:.6g}}}"
    if d["shape"] == "contending":
        what = f"""# ({d['clusters']} nodes of cores {d['cores']}): inside a node two core links and the node's memory
# backbone (SHARED); between nodes the route's links, the narrowest (the NIC) shared by the transfers
# it carries. The SMPI settings are bench/sim/tune.py's (config/platforms/fattree-contending.yaml says
# why each is so)."""
        crosses, shm_points = "true", f"    - {shm_point}"
    else:
        what = f"""# ({d['clusters']} nodes of {d['cores']} cores): inside a node the loopback, a fat pipe that never
# contends (the same point at every tau); between nodes the route's links, the narrowest shared by
# the transfers of a host's private link. The SMPI settings are bench/sim/tune.py's
# (config/platforms/fattree-contending.yaml says why each is so)."""
        crosses = "false"
        shm_points = f"    - {shm_point}\n    - {shm_point.replace('tau: 1,', 'tau: 1048576,')}"
    return f"""# {path} as the cost model sees it, written by bench/sim/describe_platform.py
{what}
{spread}name: {name}
shm_copies_per_message: 1
nic_copies_per_message: 0
transfers_wait_for_receiver: true
probe_us: 0.1
network_crosses_memory: {crosses}
local_copies_free: true
{switches}shm:
  overhead_us: 0
  receive_overhead_us: 1
  eager_threshold_bytes: 65536
  transfer:
{shm_points}
  size_factors:
{factors}
net:
  overhead_us: 0
  receive_overhead_us: 1
  eager_threshold_bytes: 65536
  transfer:
    - {{tau: 1, latency_us: {d['net_latency']:.6g}, gbytes_per_s: {d['net_bandwidth']:.6g}}}
  size_factors:
{factors}
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("platform", help="a bench/sim/platforms/*.xml")
    ap.add_argument("-o", "--output", help="the description to write (default: standard output)")
    ap.add_argument("--name", help="the description's name (default: the file's, without .xml)")
    args = ap.parse_args()
    name = args.name or re.sub(r"\.xml$", "", args.platform.split("/")[-1])
    text = yaml_text(name, args.platform, describe(args.platform))
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
