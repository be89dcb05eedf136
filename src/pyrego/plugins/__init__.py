"""Runtime plugins of the policy server: bundle downloads, decision logs."""
