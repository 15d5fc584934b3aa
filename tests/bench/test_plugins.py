"""Components added from outside the package (``PAGEINDEX_PLUGINS`` naming a module in tests/)
run through ``pageindex bench run`` like built-in ones; no file of the package names them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.samples import load_samples

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = "tests.plugin_example"


def bench_run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "PAGEINDEX_MODEL")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env["PAGEINDEX_PLUGINS"] = PLUGIN
    env["PAGEINDEX_CACHE_DIR"] = str(tmp_path / "cache")
    cmd = [sys.executable, "-m", "pageindex.cli", "bench", "run", "--quiet", "--limit", "2",
           "--out", str(tmp_path / "run"), *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=240)


def test_package_never_names_the_plugin() -> None:
    for package in ("pageindex", "bench"):
        for path in (ROOT / package).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            assert "plugin_example" not in text and "opening-page" not in text, path


def test_a_retriever_and_a_judge_from_a_plugin_run_through_bench_run(tmp_path: Path) -> None:
    done = bench_run(tmp_path, "--retrievers", "opening-page", "--judge", "grounded")
    assert done.returncode == 0, done.stderr + done.stdout
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["judge"] == "grounded" and info["retrievers"] == ["opening-page"]
    samples = load_samples(tmp_path / "run" / "samples.jsonl")
    assert len(samples) == 2
    assert all(s.retriever == "opening-page" and s.judge == "grounded" for s in samples)
    assert all(s.pages_fetched == [1] and s.verdict == "correct" for s in samples)


def test_a_provider_from_a_plugin_answers_through_bench_run(tmp_path: Path) -> None:
    done = bench_run(tmp_path, "-r", "ask-opening-page", "--judge", "grounded", "--model", "echo/demo")
    assert done.returncode == 0, done.stderr + done.stdout
    samples = load_samples(tmp_path / "run" / "samples.jsonl")
    assert len(samples) == 2
    assert all(s.model == "echo/demo" and s.answer == "canned answer from the echo provider" for s in samples)
    assert all(s.llm_calls == 1 and s.retriever_prompt_tokens > 0 for s in samples)
    assert all(s.verdict == "correct" for s in samples)  # the plug-in judge: page 1 cited and read


def test_pageindex_retrievers_lists_a_plugin_retriever() -> None:
    env = {**os.environ, "PAGEINDEX_PLUGINS": PLUGIN, "COLUMNS": "200"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    done = subprocess.run([sys.executable, "-m", "pageindex.cli", "retrievers"], capture_output=True,
                          text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "opening-page" in done.stdout and "session" in done.stdout


def test_a_plugin_that_fails_to_import_is_one_error_line(tmp_path: Path) -> None:
    env = {**os.environ, "PAGEINDEX_PLUGINS": "tests.no_such_plugin"}
    done = subprocess.run([sys.executable, "-m", "pageindex.cli", "retrievers"], capture_output=True,
                          text=True, env=env, timeout=120, cwd=ROOT)
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: plug-in 'tests.no_such_plugin'"), done.stderr



@pytest.mark.parametrize(
    "args", [["--help"], ["bench", "run", "--help"], [], ["bench"], ["cache"], ["bench", "datasets"]]
)
def test_the_help_is_shown_beside_a_plugin_that_fails_to_import(args: list[str]) -> None:
    """The help of a user looking for what went wrong is shown, with the failure as one warning line
    (every ``--help`` was the error and exit 2); running a command is still the error."""
    env = {**os.environ, "PAGEINDEX_PLUGINS": "tests.no_such_plugin", "COLUMNS": "200"}
    done = subprocess.run([sys.executable, "-m", "pageindex.cli", *args], capture_output=True,
                          text=True, env=env, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("warning: plug-in 'tests.no_such_plugin'"), done.stderr
    assert lines[0].endswith("what it adds is missing from this help")
    assert "Usage:" in done.stdout and "Exit codes: 0 done" in done.stdout

def test_the_version_is_printed_beside_a_plugin_that_fails_to_import() -> None:
    """``pageindex --version`` reads no plug-in: the version, with the failure as one warning line
    (it was the error, exit 2, as were ``pageindex bench`` and ``pageindex cache``, whose help they show)."""
    env = {**os.environ, "PAGEINDEX_PLUGINS": "tests.no_such_plugin"}
    done = subprocess.run([sys.executable, "-m", "pageindex.cli", "--version"], capture_output=True,
                          text=True, env=env, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("pageindex-bench ")
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("warning: plug-in 'tests.no_such_plugin'"), done.stderr


def test_a_library_lookup_never_imports_a_command_line_module() -> None:
    """Commands are plug-ins of their own entry-point group, loaded by the CLI only: listing the
    retrievers and providers from Python (plug-ins included) imports neither typer nor bench.cli,
    while the CLI still mounts the bench commands."""
    env = {**os.environ, "PAGEINDEX_PLUGINS": PLUGIN}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    code = (
        "import sys\n"
        "from pageindex.retrievers.base import available_retrievers\n"
        "from pageindex.llm.providers import provider_class\n"
        "names = list(available_retrievers()); provider_class('echo')\n"
        "print(' '.join(names), 'typer' in sys.modules, 'bench.cli' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "opening-page" in done.stdout and done.stdout.split()[-2:] == ["False", "False"], done.stdout
    cli = subprocess.run([sys.executable, "-m", "pageindex.cli", "bench", "--help"], capture_output=True,
                         text=True, env={**env, "COLUMNS": "200"}, timeout=120)
    assert cli.returncode == 0 and "rejudge" in cli.stdout, cli.stderr


def test_every_command_is_mounted_whichever_module_is_imported_first() -> None:
    """Importing a ``bench.cli`` command module before ``pageindex.cli.app`` (as a test file or a
    script may) still gives the whole app: the app is built on first use, not by importing the
    helpers every command module imports (before, ``import bench.cli.faults`` first left the app
    without ``fault-server`` and every bench command after it)."""
    code = (
        "import bench.cli.faults\n"
        "from pageindex.cli import app\n"
        "from typer.main import get_command\n"
        "print(' '.join(sorted(get_command(app).commands['bench'].commands)))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert set(done.stdout.split()) >= {"compare", "datasets", "fault-server", "gate", "judge", "rejudge",
                                        "report", "run", "summary"}, done.stdout  # fmt: skip


def _installed_broken_plugin(root: Path) -> dict[str, str]:
    """A package installed as pip would leave it (a ``*.dist-info`` folder with an entry point in
    ``pageindex.plugins``) whose module raises on import; the environment that puts it on the path."""
    (root / "ep_bad.py").write_text("raise RuntimeError('the plug-in is broken')\n")
    info = root / "ep_bad-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ep-bad\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[pageindex.plugins]\nep_bad = ep_bad\n")
    unset = ("OPENAI_API_KEY", "PAGEINDEX_MODEL", "PAGEINDEX_PLUGINS")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), str(ROOT), env.get("PYTHONPATH", "")) if p)
    env["PAGEINDEX_CACHE_DIR"] = str(root / "cache")
    return env


def test_a_broken_installed_plugin_is_a_warning_and_named_where_names_are_missing(tmp_path: Path) -> None:
    """Trial 11: one installed package with a broken entry point disabled every command. Now the
    commands that do not need it work and warn; asking for a name nothing registered names it."""
    env = _installed_broken_plugin(tmp_path)
    warning = (
        "warning: plug-in 'ep_bad' (entry point 'ep_bad' of the installed package 'ep-bad') failed to "
        "import: RuntimeError: the plug-in is broken; what it adds is missing (fix or uninstall ep-bad)"
    )

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pageindex.cli", *args], capture_output=True, text=True,
                              env=env, cwd=tmp_path, timeout=240)  # fmt: skip

    listed = cli("retrievers")
    assert listed.returncode == 0 and "extractive" in listed.stdout, listed.stderr
    assert listed.stderr.splitlines() == [warning]
    out = str(tmp_path / "r")
    ran = cli("bench", "run", "-r", "extractive", "--judge", "rules", "--limit", "1", "-q", "-o", out)
    assert ran.returncode == 0 and warning in ran.stderr, ran.stderr
    missing = cli("bench", "run", "-r", "mine", "--judge", "rules", "-q", "-o", str(tmp_path / "m"))
    assert missing.returncode == 2
    error = [line for line in missing.stderr.splitlines() if line.startswith("error:")]
    assert len(error) == 1 and error[0].startswith("error: unknown retriever(s) mine; choose from ")
    assert error[0].endswith("; plug-in 'ep_bad' (entry point 'ep_bad' of the installed package 'ep-bad') "
                             "failed to import: RuntimeError: the plug-in is broken; what it adds is missing "
                             "(fix or uninstall ep-bad)")  # fmt: skip


def test_a_missing_retriever_says_where_plugin_names_come_from(tmp_path: Path) -> None:
    """Trial 11: resuming a run made with a plug-in that is not loaded now said only "unknown"."""
    from pageindex.retrievers import RetrieverConfigError
    from pageindex.retrievers.base import get_retriever

    try:
        get_retriever("firstpage")
    except RetrieverConfigError as exc:
        assert str(exc).endswith(
            " (a plug-in's name? name its module in $PAGEINDEX_PLUGINS or install its package; a resumed run "
            "needs the plug-ins it was made with)"
        ), str(exc)
    else:
        raise AssertionError("an unknown retriever was found")


def test_a_plugin_that_reuses_a_builtin_name_is_an_error_wherever_it_is_asked_for(tmp_path: Path) -> None:
    """Trial 11: a plug-in registering "extractive" won in Python and lost on the command line, by
    import order, silently. Now the name is refused in both, naming the two modules."""
    (tmp_path / "dup_plugin.py").write_text(
        "from pageindex.retrievers.base import register_retriever\n\n"
        "@register_retriever('extractive', needs_llm=False)\n"
        "async def mine(run, opts):\n"
        "    return run.result('answer', answer='hijacked')\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "PAGEINDEX_MODEL")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(tmp_path), str(ROOT), env.get("PYTHONPATH", "")) if p)
    env.update(PAGEINDEX_PLUGINS="dup_plugin", PAGEINDEX_CACHE_DIR=str(tmp_path / "cache"))
    clash = (
        "retriever 'extractive' is registered by two modules: {} and {}; rename the plug-in's, or drop one "
        "of them"
    )
    either = {clash.format("pageindex.retrievers.extractive", "dup_plugin"),
              clash.format("dup_plugin", "pageindex.retrievers.extractive")}  # fmt: skip
    run = subprocess.run(
        [sys.executable, "-m", "pageindex.cli", "bench", "run", "-r", "extractive", "--judge", "rules", "-q",
         "--limit", "1", "-o", str(tmp_path / "r")],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=240,
    )  # fmt: skip
    assert run.returncode == 2, run.stderr
    (line,) = [ln for ln in run.stderr.splitlines() if ln.strip()]
    assert line.removeprefix("error: ") in either, line
    assert not (tmp_path / "r").exists()
    code = (
        "from pageindex.retrievers import retrieve\n"
        "from pageindex.registry import PluginError\n"
        "from pageindex.tree import build_tree\n"
        "try:\n"
        "    retrieve(build_tree(r'{}'), 'q', retriever='extractive')\n"
        "except PluginError as exc:\n"
        "    print(exc)\n"
    ).format(sorted((ROOT / "datasets" / "demo" / "pdfs").glob("*.pdf"))[0])
    api = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=240)  # fmt: skip
    assert api.returncode == 0 and api.stdout.strip() in either, api.stdout + api.stderr
    listed = subprocess.run([sys.executable, "-m", "pageindex.cli", "retrievers"], capture_output=True,
                            text=True, env=env, cwd=tmp_path, timeout=240)  # fmt: skip
    assert listed.returncode == 0
    assert listed.stderr.strip().removeprefix("warning: ") in either, listed.stderr


def test_a_plugin_script_run_as_main_is_not_a_conflict_with_itself(tmp_path: Path) -> None:
    """Review 11: ``PAGEINDEX_PLUGINS=myplug python myplug.py`` registered the name under
    ``__main__`` and again under ``myplug``, and was refused as two modules."""
    (tmp_path / "myplug.py").write_text(
        "from pageindex.retrievers.base import get_retriever, register_retriever\n\n"
        "@register_retriever('mine_plug', needs_llm=False)\n"
        "async def mine(run, opts):\n"
        "    return run.result('answer', answer='hi')\n\n"
        "if __name__ == '__main__':\n"
        "    print(get_retriever('mine_plug').name)\n"
    )
    env = {**os.environ, "PAGEINDEX_PLUGINS": "myplug"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(tmp_path), str(ROOT), env.get("PYTHONPATH", "")) if p)
    done = subprocess.run([sys.executable, "myplug.py"], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "mine_plug", done.stderr


def test_resuming_a_run_whose_plugin_judge_is_not_loaded_is_one_line_naming_it(tmp_path: Path) -> None:
    """Trial 14: `--resume` of a run judged by a plug-in that is not loaded now printed "internal error:
    ValidationError ... For further information visit https://errors.pydantic.dev"."""
    done = bench_run(tmp_path, "--retrievers", "opening-page", "--judge", "grounded")
    assert done.returncode == 0, done.stderr + done.stdout
    info_path = tmp_path / "run" / "run.json"
    info = json.loads(info_path.read_text())
    info_path.write_text(json.dumps({**info, "status": "interrupted"}))
    gone = ("OPENAI_API_KEY", "PAGEINDEX_MODEL", "PAGEINDEX_PLUGINS")
    env = {k: v for k, v in os.environ.items() if k not in gone}
    env["PAGEINDEX_CACHE_DIR"] = str(tmp_path / "cache")
    cmd = [sys.executable, "-m", "pageindex.cli", "bench", "run", "--resume", str(tmp_path / "run")]
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=240)
    lines = [line for line in (res.stdout + res.stderr).splitlines() if line.strip()]
    assert res.returncode == 2 and len(lines) == 1, lines
    head = f"error: cannot resume {tmp_path / 'run'}: its stored settings: judge 'grounded' must be"
    assert lines[0].startswith(head), lines[0]
    assert "name its module in $PAGEINDEX_PLUGINS" in lines[0] and "pydantic" not in lines[0]


def test_a_plugin_module_not_on_the_path_says_how_to_make_it_importable(tmp_path: Path) -> None:
    """A newcomer's my_plugin.py in the current folder: the console script does not look there, and
    the bare ModuleNotFoundError did not say why. A module the plug-in itself imports and lacks is
    not given the hint (its own error says what is missing)."""
    (tmp_path / "my_plugin.py").write_text("import no_such_dependency_xyz\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    pageindex = Path(sys.executable).with_name("pageindex")
    done = subprocess.run([str(pageindex), "retrievers"], capture_output=True, text=True,
                          env={**env, "PAGEINDEX_PLUGINS": "my_plugin"}, timeout=120, cwd=tmp_path)
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "No module named 'my_plugin'" in lines[0], done.stderr
    assert "PYTHONPATH=. for my_plugin.py in the current folder" in lines[0], done.stderr
    done = subprocess.run([str(pageindex), "retrievers"], capture_output=True, text=True,
                          env={**env, "PAGEINDEX_PLUGINS": "my_plugin", "PYTHONPATH": str(tmp_path)},
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 2 and "no_such_dependency_xyz" in done.stderr
    assert "PYTHONPATH" not in done.stderr, done.stderr


def _run_with_plugin(tmp_path: Path, module: str, source: str, *args: str) -> subprocess.CompletedProcess:
    """``pageindex bench run`` with ``module`` (written from ``source`` into tmp_path) as the plug-in."""
    (tmp_path / f"{module}.py").write_text(source)
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "PAGEINDEX_MODEL")}
    # the clone under test first: a venv made by another clone would import that clone's pageindex
    env |= {"PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)]), "PAGEINDEX_PLUGINS": module,
            "PAGEINDEX_CACHE_DIR": str(tmp_path / "cache")}  # fmt: skip
    cmd = [sys.executable, "-m", "pageindex.cli", "bench", "run", "--quiet", "--limit", "2",
           "--out", str(tmp_path / "run"), "-r", "extractive", *args]  # fmt: skip
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=240)


def test_the_readme_s_judge_plugin_runs_as_written(tmp_path: Path) -> None:
    """README, Adding a judge: its module, copied as it is, judges a bench run."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("# my_judges.py")
    source = readme[start : readme.index("```", start)]
    done = _run_with_plugin(tmp_path, "my_judges", source, "--judge", "contains")
    assert done.returncode == 0, done.stderr + done.stdout
    samples = load_samples(tmp_path / "run" / "samples.jsonl")
    assert len(samples) == 2 and all(s.judge == "contains" and s.verdict is not None for s in samples)


BROKEN_JUDGES = """
from bench.judges.base import JudgeVerdict, register_judge

@register_judge("classy")  # the class itself, not a factory: called with model_client=...
class Classy:
    name = "classy"
    version = "1"
    def assess(self, inp):
        return JudgeVerdict(verdict="correct", judge=self.name)

class Mute:
    name = "mute"
    version = "1"

@register_judge("mute")
def make_mute(**options):
    return Mute()
"""


def test_a_plugin_judge_that_cannot_be_built_is_one_line_before_any_sample(tmp_path: Path) -> None:
    """Trial-style: a judge class decorated in place of its factory was "internal error: ValueError: judge
    'classy' ... could not be built" once the trees were built; a judge with neither assess nor judge made
    every answer a judge failure (exit 4) instead of being refused."""
    for name, says in (
        ("classy", "could not be built: TypeError: Classy() takes no arguments; @register_judge decorates"),
        ("mute", "has neither assess(JudgeInput) nor judge(question, gold_answer, answer)"),
    ):
        done = _run_with_plugin(tmp_path, "broken_judges", BROKEN_JUDGES, "--judge", name)
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert done.returncode == 2 and len(lines) == 1, done.stderr + done.stdout
        assert lines[0].startswith(f"error: judge '{name}' (from broken_judges) "), lines[0]
        assert says in lines[0], lines[0]
        assert not (tmp_path / "run").exists()


def test_a_plugin_named_by_its_file_says_to_name_the_module(tmp_path: Path) -> None:
    """``PAGEINDEX_PLUGINS=plug/my_plugin.py`` was told to use PYTHONPATH=. "for plug/my_plugin.py in the
    current folder", which does not help: the variable wants the module's name."""
    (tmp_path / "plug").mkdir()
    (tmp_path / "plug" / "my_plugin.py").write_text("")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    for given, hint in (("plug/my_plugin.py", "PYTHONPATH=plug PAGEINDEX_PLUGINS=my_plugin"),
                        ("my_plugin.py", "PYTHONPATH=. PAGEINDEX_PLUGINS=my_plugin")):  # fmt: skip
        done = subprocess.run([sys.executable, "-m", "pageindex.cli", "retrievers"], capture_output=True,
                              text=True, env={**env, "PAGEINDEX_PLUGINS": given}, timeout=120, cwd=tmp_path)
        assert done.returncode == 2
        says = f"($PAGEINDEX_PLUGINS names modules, not files: for {given} write {hint})"
        assert done.stderr.strip().endswith(says), done.stderr


def test_the_hint_for_a_dotted_plugin_module_names_its_file_in_its_folder() -> None:
    """``PAGEINDEX_PLUGINS=tests.plugin_example`` without ``PYTHONPATH=.`` said "PYTHONPATH=. for
    tests.py in the current folder" (trial 3): the module is tests/plugin_example.py."""
    import pytest

    from pageindex.registry import PluginError, _import_plugin

    with pytest.raises(PluginError) as caught:
        _import_plugin("no_such_pkg_xyz.my_plugin", "$PAGEINDEX_PLUGINS")
    assert "PYTHONPATH=. for no_such_pkg_xyz/my_plugin.py in the current folder" in str(caught.value)


VERSIONED = """
from bench.judges.base import JudgeVerdict, register_judge
from pageindex.retrievers.base import register_retriever

@register_retriever("versioned", needs_llm=False)
async def versioned(run, opts):
    return run.result("answer", answer=ANSWER)

class Judge:
    name, version = "same", "1"
    def assess(self, inp):
        return JudgeVerdict(verdict=VERDICT, judge=self.name, judge_version=self.version)

@register_judge("same")
def make_same(**options):
    return Judge()
"""


def test_two_versions_of_a_plugin_are_told_apart_by_run_json_and_compare(tmp_path: Path) -> None:
    """Review rev-plugin: runs of two versions of one plug-in (same name, no prompt version, same judge
    version) wrote run.json files identical but for their ids and times, and ``bench compare`` said no
    setting differed: the plug-in's identity (its module and a digest of its code) was recorded nowhere."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "PAGEINDEX_MODEL")}
    env |= {"PAGEINDEX_PLUGINS": "versioned_plugin", "PAGEINDEX_CACHE_DIR": str(tmp_path / "cache")}
    infos = {}
    for version, (answer, verdict) in {"v1": ("'one'", "'correct'"), "v2": ("'two'", "'incorrect'")}.items():
        folder = tmp_path / version
        folder.mkdir()
        (folder / "versioned_plugin.py").write_text(f"ANSWER = {answer}\nVERDICT = {verdict}\n{VERSIONED}")
        run_env = {**env, "PYTHONPATH": os.pathsep.join((str(folder), str(ROOT)))}
        cmd = [sys.executable, "-m", "pageindex.cli", "bench", "run", "--quiet", "--limit", "2",
               "-r", "versioned,extractive", "--judge", "same", "--out", str(tmp_path / f"run-{version}")]
        done = subprocess.run(cmd, capture_output=True, text=True, env=run_env, cwd=tmp_path, timeout=240)
        assert done.returncode == 0, done.stderr + done.stdout
        infos[version] = json.loads((tmp_path / f"run-{version}" / "run.json").read_text())
    from pageindex.digest import code_digest

    for version, info in infos.items():
        digest = code_digest([tmp_path / version / "versioned_plugin.py"])
        assert info["retriever_code"] == {"versioned": f"versioned_plugin {digest}"}  # built-ins: git_commit
        assert info["judge_code"] == f"versioned_plugin {digest}"
    a, b = infos["v1"]["retriever_code"]["versioned"], infos["v2"]["retriever_code"]["versioned"]
    assert a != b
    compare = [sys.executable, "-m", "pageindex.cli", "bench", "compare", str(tmp_path / "run-v1"),
               str(tmp_path / "run-v2")]
    done = subprocess.run(compare, capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**env, "PYTHONPATH": str(ROOT), "PAGEINDEX_PLUGINS": "", "COLUMNS": "400"})
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stdout.splitlines() if line.startswith("settings that differ:")]
    assert said == [f"settings that differ: versioned plug-in code: run-v1={a} vs run-v2={b}; judge same "
                    f"plug-in code: run-v1={a} vs run-v2={b}"], done.stdout


def test_the_identity_of_an_entry_point_plugin_names_its_package_and_version(tmp_path: Path) -> None:
    env = _installed_broken_plugin(tmp_path)
    (tmp_path / "ep_bad.py").write_text(VERSIONED.replace("ANSWER", "'x'").replace("VERDICT", "'correct'"))
    code = ("from pageindex import registry; print(registry.plugin_identity('retriever', 'versioned')); "
            "print(registry.plugin_identity('retriever', 'extractive'))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    from pageindex.digest import code_digest

    digest = code_digest([tmp_path / "ep_bad.py"])
    assert done.stdout.splitlines() == [f"ep_bad {digest} (ep-bad 0.1)", "None"]


def test_a_module_of_a_retrievers_or_judges_package_that_fails_to_import_is_named(tmp_path: Path) -> None:
    """Review rev-plugin: a half-written module in a package of retrievers (README, Adding a retriever:
    ``pageindex/retrievers/<name>.py``; here a package a plug-in declares, scanned the same way) was
    silent: ``pageindex retrievers`` said nothing, and asking for its retriever or judge said "unknown
    retriever(s) fancy ... (a plug-in's name? name its module in $PAGEINDEX_PLUGINS ...)"."""
    (tmp_path / "declarer.py").write_text(
        "from pageindex import registry\n"
        "registry.declare('retriever', 'more_rets')\nregistry.declare('judge', 'more_judges')\n"
    )
    for package, decorator in (("more_rets", "pageindex.retrievers.base import register_retriever"),
                               ("more_judges", "bench.judges.base import register_judge")):  # fmt: skip
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
        (tmp_path / package / "fancy.py").write_text(f"from {decorator}\nimport no_such_dep_xyz\n")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "PAGEINDEX_MODEL")}
    env |= {"PYTHONPATH": os.pathsep.join((str(tmp_path), str(ROOT))), "PAGEINDEX_PLUGINS": "declarer",
            "PAGEINDEX_CACHE_DIR": str(tmp_path / "cache"), "COLUMNS": "200"}  # fmt: skip

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pageindex.cli", *args], capture_output=True, text=True,
                              env=env, cwd=tmp_path, timeout=240)  # fmt: skip

    why = "failed to import: ModuleNotFoundError: No module named 'no_such_dep_xyz'; what it registers is " \
        "missing"
    listed = cli("retrievers")
    assert listed.returncode == 0 and "extractive" in listed.stdout, listed.stderr
    assert listed.stderr.splitlines() == [f"warning: retriever module 'more_rets.fancy' {why}"]
    ran = cli("bench", "run", "-r", "fancy", "-q", "-o", str(tmp_path / "r1"))
    assert ran.returncode == 2, ran.stderr
    assert ran.stderr.splitlines() == [
        "error: unknown retriever(s) fancy; choose from agent, bm25, extractive, followup, iterative, "
        f"oracle, planner, session; retriever module 'more_rets.fancy' {why}"
    ]
    judged = cli("bench", "run", "-r", "extractive", "--judge", "fancy", "-q", "-o", str(tmp_path / "r2"))
    assert judged.returncode == 2, judged.stderr
    assert f"judge module 'more_judges.fancy' {why}" in judged.stderr, judged.stderr
    assert not (tmp_path / "r1").exists() and not (tmp_path / "r2").exists()
    rows = tmp_path / "answers.jsonl"
    rows.write_text('{"question": "q", "gold_answer": "1", "model_answer": "1"}\n')
    verdicts = cli("bench", "judge", "--input", str(rows), "--judge", "fancy", "--out", str(tmp_path / "v"))
    assert verdicts.returncode == 2 and verdicts.stderr.splitlines() == [
        "error: unknown judge 'fancy'; choose one of hybrid, llm, panel, rules; judge module "
        f"'more_judges.fancy' {why}"
    ], verdicts.stderr


def test_resuming_a_run_whose_plugin_code_changed_says_so_and_records_it(tmp_path: Path) -> None:
    """Review rev-plugin: a run resumed after its plug-in retriever was edited kept the old code's samples
    and ran the rest with the new code, without a word; run.json then named only the new code."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "PAGEINDEX_MODEL")}
    env |= {"PAGEINDEX_PLUGINS": "versioned_plugin", "PAGEINDEX_CACHE_DIR": str(tmp_path / "cache")}
    out = tmp_path / "run"
    digests = []
    for version, answer in (("v1", "'one'"), ("v2", "'two'")):
        folder = tmp_path / version
        folder.mkdir()
        (folder / "versioned_plugin.py").write_text(f"ANSWER = {answer}\nVERDICT = 'correct'\n{VERSIONED}")
        from pageindex.digest import code_digest

        digests.append(f"versioned_plugin {code_digest([folder / 'versioned_plugin.py'])}")
        run_env = {**env, "PYTHONPATH": os.pathsep.join((str(folder), str(ROOT)))}
        first_run = ["--limit", "2", "-r", "versioned", "--out", str(out)]
        args = ["--resume", str(out)] if version == "v2" else first_run
        done = subprocess.run([sys.executable, "-m", "pageindex.cli", "bench", "run", "--quiet", *args],
                              capture_output=True, text=True, env=run_env, cwd=tmp_path, timeout=240)
        assert done.returncode == 0, done.stderr + done.stdout
        if version == "v1":  # as a run stopped after its first sample leaves it
            first = (out / "samples.jsonl").read_text().splitlines()[0]
            (out / "samples.jsonl").write_text(first + "\n")
    note = (f"plug-in retriever versioned's code changed since the run started ({digests[0]} -> "
            f"{digests[1]}): the samples kept are the old code's, those run now the new code's; start a new "
            "run to measure one of them")
    assert f"note: {note}" in done.stderr.replace("\n", " "), done.stderr
    info = json.loads((out / "run.json").read_text())
    assert info["retriever_code"] == {"versioned": digests[1]}
    assert info["extra"]["resumes"][-1]["plugin_code_changed"] == [note]
    assert sorted(s.answer for s in load_samples(out / "samples.jsonl")) == ["one", "two"]


def test_a_plugin_that_calls_exit_on_import_is_one_error_line_not_its_exit_code(tmp_path: Path) -> None:
    """Review rev-plugin: a plug-in module that called ``sys.exit(3)`` on import ended every command with
    exit 3 ("budget reached") and no word; an installed one's did so too, instead of a warning."""
    (tmp_path / "exits_on_import.py").write_text("import sys\nsys.exit(3)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join((str(tmp_path), str(ROOT))),
           "PAGEINDEX_PLUGINS": "exits_on_import"}  # fmt: skip
    done = subprocess.run([sys.executable, "-m", "pageindex.cli", "retrievers"], capture_output=True,
                          text=True, env=env, timeout=120, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "error: plug-in 'exits_on_import' ($PAGEINDEX_PLUGINS) failed to import: SystemExit: the module "
        "called sys.exit(3) on import"
    ]
    installed = tmp_path / "installed"
    installed.mkdir()
    env = _installed_broken_plugin(installed)
    (installed / "ep_bad.py").write_text("import sys\nsys.exit(3)\n")
    listed = subprocess.run([sys.executable, "-m", "pageindex.cli", "retrievers"], capture_output=True,
                            text=True, env={**env, "COLUMNS": "200"}, timeout=120, cwd=tmp_path)
    assert listed.returncode == 0 and "extractive" in listed.stdout, listed.stderr
    assert listed.stderr.splitlines() == [
        "warning: plug-in 'ep_bad' (entry point 'ep_bad' of the installed package 'ep-bad') failed to "
        "import: SystemExit: the module called sys.exit(3) on import; what it adds is missing (fix or "
        "uninstall ep-bad)"
    ]


def test_a_plugin_retriever_that_needs_a_model_and_has_none_says_how_to_declare_none(tmp_path: Path) -> None:
    """Trial 23: a model-free plug-in retriever written as the README's example (no ``needs_llm``) was
    skipped by ``bench run -r firstpage,extractive`` with "no model is configured", exit 0, and refused
    by ``ask``; nothing said that a retriever which calls no model declares it. The lines now name the
    plug-in and ``needs_llm=False``; the package's own retrievers keep their line."""
    hint = ("(ask-opening-page is a plug-in, tests.plugin_example: one that calls no model says so with "
            "@register_retriever(..., needs_llm=False))")  # fmt: skip
    done = bench_run(tmp_path, "--retrievers", "ask-opening-page,extractive", "--judge", "rules")
    assert done.returncode == 0, done.stderr + done.stdout
    assert "skipped retrievers ask-opening-page: no model is configured." in done.stdout
    assert " ".join(done.stdout.split()).count(hint) == 1, done.stdout
    (tmp_path / "alone").mkdir()
    (tmp_path / "builtin").mkdir()
    alone = bench_run(tmp_path / "alone", "--retrievers", "ask-opening-page", "--judge", "rules")
    assert alone.returncode == 2
    assert alone.stderr.strip() == (
        "error: no retriever can run: ask-opening-page: needs a model (set OPENAI_API_KEY, or pass --model "
        f"openai/... or ollama/...) {hint}"
    )
    builtin = bench_run(tmp_path / "builtin", "--retrievers", "agent", "--judge", "rules")
    assert builtin.returncode == 2 and "plug-in" not in builtin.stderr, builtin.stderr

    # retrieve() in a process of its own: importing the plug-in here would register its judge
    # ("grounded") for every later test of this worker
    code = (
        "import tests.plugin_example\n"
        "from pageindex import build_tree\n"
        "from pageindex.retrievers import RetrieverConfigError, retrieve\n"
        f"tree = build_tree({str(ROOT / 'datasets' / 'demo' / 'pdfs' / 'NORTHWIND_2023_10K.pdf')!r}, "
        f"cache_dir={str(tmp_path / 'trees')!r})\n"
        "try:\n"
        "    retrieve(tree, 'What was capex?', retriever='ask-opening-page')\n"
        "except RetrieverConfigError as exc:\n"
        "    print(exc)\n"
    )
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path}
    said = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    needs = "retriever 'ask-opening-page' needs a model: pass llm=<client or model spec>"
    assert said.stdout.strip() == f"{needs} {hint}", said.stderr
