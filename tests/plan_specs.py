"""An xhpl stack and a partition of 1,024 Zen 4 nodes of 128 cores that the plan tests share."""
from scalebench.site.partition import PartitionSpec, StackSpec
from scalebench.site.scales import ScaleSpec

GiB = 2**30
XHPL = StackSpec("s", "s", ("hpl",), {"hpl_binary": "xhpl"})
ZEN4 = PartitionSpec("zen4", "cpu", "slurm", "srun", 1024, 128, 768 * GiB, "zen4", 3.1, 16,
                     scale_spec=ScaleSpec(cores=(1, 13, 16)), max_time_limit_s=86400)
