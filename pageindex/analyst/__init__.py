"""Analyst mode: questions about filings from the terminal, with sessions that remember what was read.

- :mod:`pageindex.analyst.session` -- the session (material, turns, expiry, size cap);
- :mod:`pageindex.analyst.store` -- saving and reopening sessions by name;
- :mod:`pageindex.analyst.engine` -- :class:`Analyst`: session first, then the chosen retriever;
- :mod:`pageindex.analyst.session_retriever` -- the ``session`` retriever (answers from material);
- :mod:`pageindex.analyst.render` / :mod:`pageindex.analyst.repl` -- terminal output and the prompt loop.
"""
