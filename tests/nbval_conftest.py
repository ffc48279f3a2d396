"""nbval settings, copied next to the prepared notebooks by `notebooks prepare-nbval`."""


def pytest_collectstart(collector):
    # stderr carries TensorFlow's log lines, which differ between runs and machines.
    if collector.fspath and collector.fspath.ext == ".ipynb":
        collector.skip_compare += ("stderr",)
