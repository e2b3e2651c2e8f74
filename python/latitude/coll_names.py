"""The names the collective models know, without the models (numpy): the CLI declares its
choices from these at start-up, and latitude.coll_model / coll_fit use the same ones."""

# Broadcast/reduce trees the composition model prices (Tallone's algorithms).
TREES = ("linear", "chain", "binary", "binomial")
# Collectives the models cover.
MODELLED = ("bcast", "reduce")
# The statistic of each configuration's samples a fit uses, as a percentile.
STATS = {"median": 50.0, "p25": 25.0, "p10": 10.0}
