# accounting stage (rules are added by the issue that builds this stage).
