"""What a Cloud TPU run costs, from the dated list prices in `tpu_prices.yaml`."""

import math
from typing import NamedTuple

from tpuhelpers.checks import number, one_of
from tpuhelpers.cloud_jobs import load_data

PRICES = load_data("tpu_prices.yaml")  # US dollars per hour, with the table's date and sources


class Cost(NamedTuple):
    """One run's cost in US dollars: the TPU, its host VM (billed apart), and both."""

    billed_seconds: int
    tpu_usd: float
    host_usd: float
    total_usd: float


def hourly_price(table: str, name: str, region: str, preemptible: bool = False) -> float:
    """The price per hour of `name`, a TPU type (`table="tpu"`) or a host VM (`"host_vm"`)."""
    one_of(name, PRICES[table], f"{table} with a price in tpu_prices.yaml")
    one_of(region, PRICES[table][name], f"region with a price for {name}")
    return PRICES[table][name][region]["preemptible" if preemptible else "on_demand"]


def estimate_cost(
    tpu_type: str, region: str, hours: float, *, preemptible=False, host_machine_type=None
) -> Cost:
    """Prices `hours` billed per started second, plus a host VM if named; ValueError if no price."""
    seconds = math.ceil(round(number(hours, "hours") * 3600, 6))
    tpu = hourly_price("tpu", tpu_type, region, preemptible) * seconds / 3600
    vm = host_machine_type
    host = hourly_price("host_vm", vm, region, preemptible) * seconds / 3600 if vm else 0.0
    return Cost(seconds, tpu, host, tpu + host)
