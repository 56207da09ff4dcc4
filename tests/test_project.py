"""Project-wide analysis: summaries of other modules, project facts, import cycles, modules that do not parse."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from np2torch_lint.analysis import Analyzer
from np2torch_lint.commands import lint_paths
from np2torch_lint.config import load_settings
from np2torch_lint.engine import LintContext, analyse_text, lint_text
from np2torch_lint.files import read_source
from np2torch_lint.project import Project
from np2torch_lint.project.modules import imported_modules, top_level_imports

from helpers import REPO, expected_findings, run_command

PROJECTS = REPO / "tests" / "data" / "projects"
CASES = [("relative", "pkg/train.py"), ("srclayout", "scripts/run.py"), ("buffers", "sample_check.py"),
         ("defaults", "load_data.py"), ("defaults", "serve.py"), ("cycle", "a.py"), ("broken", "good.py"),
         ("helpers", "pkg/vsr.py"), ("constructed", "sample_check.py"),
         ("parameter_free", "use.py"), ("package_cycle", "train.py"), ("package_cycle", "nets/Head.py"),
         ("agents", "agent.py")]


def lint_in_project(root: Path, relative: str) -> list:
    path = root / relative
    context = LintContext(project=Project.at(root))
    return lint_text(read_source(str(path)).text, str(path), context=context)


def lint_written(root: Path, files: dict[str, str]) -> list:
    """Write ``files`` (path relative to ``root`` -> text) and a ``pyproject.toml`` under ``root``, lint the folder
    as a project and give its diagnostics; no file may fail to be read."""
    (root / "pyproject.toml").write_text("[tool.np2torch-lint]\n", encoding="utf-8")
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    diagnostics, errors = lint_paths([str(root)], load_settings(root / "pyproject.toml"))
    assert errors == []
    return diagnostics


@pytest.mark.parametrize(("project", "relative"), CASES)
def test_findings_that_need_other_modules_match_the_expectations(project: str, relative: str):
    root = PROJECTS / project
    found = Counter((d.line, d.code) for d in lint_in_project(root, relative))
    assert found == expected_findings(root / relative)


# (agents: alone, the unknown Actor moved to the device is taken for a module there too)
@pytest.mark.parametrize(("project", "relative"), [case for case in CASES
                                                   if case[0] not in ("broken", "cycle", "agents")
                                                   and case != ("defaults", "serve.py")])
def test_without_the_project_the_same_file_misses_what_other_modules_say(project: str, relative: str):
    path = PROJECTS / project / relative
    alone = Counter((d.line, d.code) for d in lint_text(read_source(str(path)).text, str(path)))
    assert alone != expected_findings(path)


def test_a_legacy_constructor_fix_is_unsafe_where_another_module_sets_the_default_tensor_type():
    root = PROJECTS / "defaults"
    path = root / "load_data.py"
    analysis = analyse_text(read_source(str(path)).text, str(path), context=LintContext(project=Project.at(root)))
    (finding,) = [f for f in analysis.findings if f.code == "NPT009"]
    assert finding.fix is not None and finding.fix.applicability.value == "unsafe"
    assert "run.py" in finding.fix.title
    alone = analyse_text(read_source(str(path)).text, str(path))
    (safe,) = [f for f in alone.findings if f.code == "NPT009"]
    assert safe.fix is not None and safe.fix.applicability.value == "safe"


def test_project_facts_name_the_modules_that_change_the_default_dtype():
    project = Project.at(PROJECTS / "defaults")
    assert project.facts().default_dtype_changed_in == ("run.py",)
    assert Project.at(PROJECTS / "relative").facts().changes_default_dtype is False


def test_a_default_dtype_holds_in_the_programs_that_set_it_not_in_other_entry_scripts(tmp_path: Path):
    (tmp_path / "config.py").write_text("import torch\ntorch.set_default_dtype(torch.float64)\n")
    (tmp_path / "model.py").write_text("import numpy as np\nimport torch\nw = torch.from_numpy(np.zeros(3))\n")
    (tmp_path / "train.py").write_text("import config\nimport model\n")  # sets the default, then runs model.py
    (tmp_path / "child.py").write_text("import config\n")  # runs after config sets it: imports it
    (tmp_path / "serve.py").write_text("import numpy as np\nimport torch\nx = torch.from_numpy(np.ones(3))\n")
    facts = Project.at(tmp_path).facts()
    assert facts.default_dtype_changed_in == ("config.py",)
    for module in ("config.py", "model.py", "train.py", "child.py"):
        assert facts.default_dtype_changed_for(module) == ("config.py",), module
    assert facts.default_dtype_changed_for("serve.py") == ()
    assert [d.code for d in lint_in_project(tmp_path, "model.py")] == []
    assert [d.code for d in lint_in_project(tmp_path, "serve.py")] == ["NPT004"]


def test_a_default_tensor_type_that_keeps_float32_does_not_make_float64_wanted(tmp_path: Path):
    # cryodrgn's commands move the default tensor to CUDA, still float32: a float64 slice offset in the model they
    # run is NumPy's default leaking all the same; a legacy constructor's fix is still unsafe there (its device)
    model = ("import numpy as np\nimport torch\n\n\ndef offsets(D):\n"
             "    for dz in np.linspace(-0.5, 0.5, D):\n        yield torch.tensor([0, 0, dz])\n")
    (tmp_path / "model.py").write_text(model)
    (tmp_path / "train.py").write_text("import torch\nimport model\n"
                                       "torch.set_default_tensor_type(torch.cuda.FloatTensor)\n")
    (tmp_path / "serve.py").write_text("import torch\nimport model\n"
                                       "torch.set_default_tensor_type('torch.FloatTensor')\n"
                                       "torch.set_default_dtype(torch.float32)\n")
    facts = Project.at(tmp_path).facts()
    assert facts.default_dtype_changed_for("model.py") == ("serve.py", "train.py")
    assert facts.float32_default_set_in == ("serve.py", "train.py")
    assert [d.code for d in lint_in_project(tmp_path, "model.py")] == ["NPT004"]
    (tmp_path / "train.py").write_text("import torch\nimport model\n"
                                       "torch.set_default_tensor_type(torch.cuda.FloatTensor)\n"
                                       "torch.set_default_dtype(torch.float64)\n")
    assert Project.at(tmp_path).facts().float32_default_set_in == ("serve.py",)
    assert [d.code for d in lint_in_project(tmp_path, "model.py")] == []


def test_a_fact_another_module_s_body_makes_about_the_caller_s_code_does_not_break_the_caller(tmp_path: Path):
    # graph-generation's DeepGMG: each graph's list starts with a moved tensor, and model.py's message passing reads
    # it; what that read found about train.py's node is not model.py's to report (it raised KeyError there)
    (tmp_path / "model.py").write_text(
        "import torch\n\n\ndef message_passing(neighbors, embedding, model):\n    new = []\n"
        "    for i in range(len(neighbors)):\n        if len(neighbors[i]) > 0:\n"
        "            others = torch.cat([embedding[j] for j in neighbors[i]], dim=0)\n"
        "            new.append(model.f(others, embedding[i]))\n        else:\n"
        "            new.append(model.f(torch.zeros(1, 4).cuda(), embedding[i]))\n    return new\n")
    (tmp_path / "train.py").write_text(
        "import torch\nfrom model import *\n\n\ndef train(dataset, model, size):\n    for graph in dataset:\n"
        "        embedding = [torch.ones(1, size).cuda()]\n        count = 1\n        while count <= len(graph):\n"
        "            embedding = message_passing(graph[:count], embedding, model)\n"
        "            stacked = torch.cat(embedding, dim=0)\n            count += 1\n    return stacked\n")
    result = run_command("np2torch-lint", "--no-cache", ".", cwd=tmp_path)
    assert "internal error" not in result.stderr.decode(), result.stderr
    assert result.returncode == 0, result.stdout


def test_a_default_set_by_a_package_init_holds_where_only_a_submodule_is_imported(tmp_path: Path):
    # neurodiffeq's __init__ calls its own helper that sets float64: importing a submodule runs the __init__ first
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "__init__.py").write_text("from .utils import set_bits\nset_bits(64)\n")
    (tmp_path / "lib" / "utils.py").write_text("import torch\n\n\ndef set_bits(bits):\n"
                                               "    torch.set_default_dtype(torch.float64)\n")
    (tmp_path / "lib" / "basis.py").write_text("import torch\n")
    test = "import numpy as np\nimport torch\nimport lib.basis\nx = torch.from_numpy(np.ones(3))\n"
    (tmp_path / "test_basis.py").write_text(test)
    (tmp_path / "serve.py").write_text("import numpy as np\nimport torch\nx = torch.from_numpy(np.ones(3))\n")
    facts = Project.at(tmp_path).facts()
    assert facts.default_dtype_changed_for("test_basis.py") == ("lib/utils.py",)
    assert [d.code for d in lint_in_project(tmp_path, "test_basis.py")] == []
    assert [d.code for d in lint_in_project(tmp_path, "serve.py")] == ["NPT004"]


def test_float64_in_a_test_module_is_not_reported(tmp_path: Path):
    # metric tests give torch NumPy's float64 on purpose and compare the result with NumPy's or sklearn's
    converts = "import numpy as np\nimport torch\nx = torch.from_numpy(np.random.rand(3))\n"
    found = lint_written(tmp_path, {name: converts for name in (
        "tests/metrics.py", "test_loss.py", "loss_test.py", "conftest.py", "src/testing/cases.py", "model.py",
        "contest.py", "src/latest/model.py")})
    assert sorted(Path(d.filename).relative_to(tmp_path).as_posix() for d in found if d.code == "NPT004") == [
        "contest.py", "model.py", "src/latest/model.py"]


def test_modules_resolve_through_relative_imports_source_roots_and_the_script_folder():
    project = Project.at(PROJECTS / "srclayout")
    files = project.files
    assert files.module_of(PROJECTS / "srclayout" / "src" / "mylib" / "nets.py") == ("mylib.nets", False)
    assert files.module_of(PROJECTS / "srclayout" / "scripts" / "run.py") == ("scripts.run", False)
    assert files.path_of("mylib.nets") == (PROJECTS / "srclayout" / "src" / "mylib" / "nets.py").resolve()
    link = Project.at(PROJECTS / "relative").link(PROJECTS / "relative" / "pkg" / "train.py")
    assert link.absolute(1, "data") == "pkg.data"
    assert link.absolute(1, None) == "pkg"
    assert link.absolute(3, "x") is None  # above the top of the project
    buffers = Project.at(PROJECTS / "buffers", src=["src"])  # no such root: the script's folder still resolves
    assert buffers.files.path_of("replay", (PROJECTS / "buffers").resolve()) is not None


def test_module_paths_are_found_as_python_finds_them(tmp_path: Path):
    for name in ("pkg/__init__.py", "pkg/mod.py", "pkg/sub/__init__.py", "pkg/both.py", "pkg/both/__init__.py",
                 "namespace/inner.py", "script.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "pkg" / "folder.py").mkdir()  # a folder named like a module is not one
    (tmp_path / "linked").symlink_to(tmp_path / "pkg", target_is_directory=True)
    files = Project.at(tmp_path).files
    root = tmp_path.resolve()
    assert files.path_of("pkg") == root / "pkg" / "__init__.py"
    assert files.path_of("pkg.mod") == root / "pkg" / "mod.py"
    assert files.path_of("pkg.sub") == root / "pkg" / "sub" / "__init__.py"
    assert files.path_of("pkg.both") == root / "pkg" / "both.py"  # the module before the package, as listed
    assert files.path_of("namespace.inner") == root / "namespace" / "inner.py"
    assert files.path_of("linked.mod") == root / "pkg" / "mod.py"  # through the link, to the file itself
    assert files.path_of("script") == root / "script.py"
    for missing in ("pkg.folder", "pkg.mod.attribute", "pkg.missing", "namespace", "torch.float32", "pkg..mod"):
        assert files.path_of(missing) is None, missing
    assert files.has_top("pkg") and files.has_top("script") and not files.has_top("torch")


DEFAULTS_LIB = """\
import torch

import elsewhere


def weights(n, requires_grad=True):
    return torch.ones(n, requires_grad=requires_grad)


def placed(n, device=None):
    if device is None:
        device = "cuda"
    return torch.zeros(n, device=device)


def device_of(device="cuda"):
    return device


def unknown(n, device="cuda"):
    return elsewhere.make(n, device)
"""
DEFAULTS_MAIN = """\
import torch

from lib import device_of, placed, unknown, weights

weights(3).numpy()
placed(3).numpy()
torch.zeros(3, device=device_of()).numpy()
weights(3, requires_grad=False).numpy()
unknown(3).numpy()
"""


def test_another_modules_function_called_without_its_defaulted_parameters_gives_what_its_defaults_give(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (tmp_path / "lib.py").write_text(DEFAULTS_LIB, encoding="utf-8")
    (tmp_path / "main.py").write_text(DEFAULTS_MAIN, encoding="utf-8")
    read_with_defaults = []
    original = Analyzer._returns_with_defaults

    def spy(self, info):
        read_with_defaults.append(info.name)
        return original(self, info)

    monkeypatch.setattr(Analyzer, "_returns_with_defaults", spy)
    found = sorted((d.line, d.code) for d in lint_in_project(tmp_path, "main.py"))
    assert found == [(5, "NPT001"), (6, "NPT002"), (7, "NPT002")]  # by the defaults; line 8 passes its own
    # a body that returns something unknown for unknown arguments, other than a parameter, is not read again
    assert sorted(read_with_defaults) == ["device_of", "placed", "weights"]


def test_an_unknown_result_with_the_defaults_holds_for_a_caller_that_leaves_them(tmp_path: Path):
    # for unknown arguments the body may move ``x`` (``device`` unknown); with the default it does not, and what
    # it returns is unknown, which is what a call leaving ``device`` out gets
    (tmp_path / "lib.py").write_text(
        "import torch\n\n\ndef features(x, device=None):\n    if device is not None:\n"
        "        x = x.to(device)\n    return torch.relu(x)\n", encoding="utf-8")
    (tmp_path / "main.py").write_text(
        "from lib import features\n\n\ndef run(x):\n    print(features(x).numpy())\n"
        "    print(features(x, 'cuda').numpy())\n", encoding="utf-8")
    assert sorted((d.line, d.code) for d in lint_in_project(tmp_path, "main.py")) == [(6, "NPT002")]


SCRIPT_HELPER = """\
import numpy as np
import torch


def evaluate(model, x):
    with torch.no_grad():
        return np.concatenate([model(x.cuda())])
"""


def test_a_folder_of_scripts_imports_its_own_siblings_before_the_projects_roots(tmp_path: Path):
    # ``python experiments/train.py`` puts ``experiments/`` first on ``sys.path``: its ``helper`` is the copy beside
    # it (DeepGBM keeps one in each folder), and what the call finds there is that copy's finding
    (tmp_path / "experiments").mkdir()
    for folder in (tmp_path, tmp_path / "experiments"):
        (folder / "helper.py").write_text(SCRIPT_HELPER, encoding="utf-8")
    (tmp_path / "experiments" / "train.py").write_text(
        "import torch\nfrom helper import evaluate\n\nevaluate(torch.nn.Linear(2, 2).cuda(), torch.ones(2))\n",
        encoding="utf-8")
    files = Project.at(tmp_path).files
    assert files.path_of("helper", (tmp_path / "experiments").resolve()) == (
        tmp_path / "experiments" / "helper.py").resolve()
    (tmp_path / "pyproject.toml").write_text("[tool.np2torch-lint]\n", encoding="utf-8")
    diagnostics, errors = lint_paths([str(tmp_path)], load_settings(tmp_path / "pyproject.toml"))
    assert errors == []
    assert [(Path(d.filename).parent.name, d.line, d.code) for d in diagnostics if d.code == "NPT002"] == [
        ("experiments", 7, "NPT002")]


def test_classes_imported_on_branches_reach_another_modules_function_as_choices(tmp_path: Path):
    # EVCF: ``from models.baseline import VAE`` on one branch, ``from models.vamp import VAE`` on another, the model
    # moved in place under a flag and handed to an experiment in another module
    diagnostics = lint_written(tmp_path, {
        "models/__init__.py": "",
        "models/baseline.py":
            "from torch import nn\n\n\nclass VAE(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.decoder = nn.Linear(2, 2)\n\n    def reconstruct(self, x):\n"
            "        return self.decoder(x)\n",
        "models/vamp.py": "from models.baseline import VAE as Base\n\n\nclass VAE(Base):\n    pass\n",
        "evaluation.py":
            "import numpy as np\nimport torch\n\n\ndef evaluate(model, x):\n    with torch.no_grad():\n"
            "        return np.array(model.reconstruct(x))\n",
        "experiment.py":
            "import torch\n\n\ndef run(name, cuda):\n    if name == 'baseline':\n"
            "        from models.baseline import VAE\n    else:\n        from models.vamp import VAE\n"
            "    model = VAE()\n    if cuda:\n        model.cuda()\n    from evaluation import evaluate\n"
            "    return evaluate(model, torch.ones(2))\n",
    })
    assert [(Path(d.filename).name, d.line, d.code) for d in diagnostics] == [("evaluation.py", 7, "NPT002")]


def test_items_another_modules_body_moved_count_there_when_this_module_stacks_them(tmp_path: Path):
    # the body of ``moved`` read for this call moves each item and leaves the list waiting for a stack; the stack is
    # here, the transfer is there: reported in buffer.py, through this call (it once ended the run with a KeyError)
    diagnostics = lint_written(tmp_path, {
        "buffer.py": "def moved(items, device):\n    return [item.to(device) for item in items]\n",
        "main.py": "import torch\n\nfrom buffer import moved\n\n\ndef batch(frames):\n"
                   "    return torch.stack(moved(frames, 'cuda'))\n",
    })
    assert [(Path(d.filename).name, d.line, d.code) for d in diagnostics] == [("buffer.py", 2, "NPT005")]
    assert diagnostics[0].message.endswith("(through the call of moved at main.py:7)")


def test_items_extended_into_a_list_count_where_another_modules_function_stacks_it(tmp_path: Path):
    # sgrvinod's object-detection eval: each image's boxes moved one by one, extended into a list that
    # utils.calculate_mAP concatenates
    diagnostics = lint_written(tmp_path, {
        "metrics.py": "import torch\n\n\ndef areas(boxes):\n    return torch.cat(boxes).prod(1)\n",
        "evaluate.py": "from metrics import areas\n\n\ndef evaluate(test_loader, device):\n    true_boxes = []\n"
                       "    for images, boxes in test_loader:\n        boxes = [b.to(device) for b in boxes]\n"
                       "        true_boxes.extend(boxes)\n    return areas(true_boxes)\n",
    })
    assert [(Path(d.filename).name, d.line, d.code) for d in diagnostics] == [("evaluate.py", 7, "NPT005")]
    assert diagnostics[0].message.endswith("(through the call of areas at line 9)")


LOSS_HISTORY = """import matplotlib.pyplot as plt
import scipy.signal


class LossHistory:
    def __init__(self, log_dir):
        self.log_dir = log_dir
        self.losses = []

    def append_loss(self, loss):
        self.losses.append(loss)
        self.loss_plot()

    def loss_plot(self):
        plt.plot(range(len(self.losses)), self.losses)
        plt.plot(scipy.signal.savgol_filter(self.losses, 5, 3))
"""


@pytest.mark.parametrize("passed", ["loss", "loss.item()"])
def test_a_list_another_modules_class_keeps_holds_what_this_modules_calls_put_into_it(tmp_path: Path, passed: str):
    # yolact's LossHistory: the epoch's loss tensor appended, then the whole curve plotted (and smoothed) from the
    # list, in the callbacks module; the tensor comes from the training module. A Python number plots fine.
    diagnostics = lint_written(tmp_path, {
        "callbacks.py": LOSS_HISTORY,
        "train.py": "import torch\n\nfrom callbacks import LossHistory\n\nhistory = LossHistory('logs/')\n"
                    "model = torch.nn.Linear(2, 1).cuda()\nloss = model(torch.ones(2).cuda()).sum()\n"
                    f"history.append_loss({passed})\n",
    })
    found = [(Path(d.filename).name, d.line, d.code) for d in diagnostics]
    if passed == "loss":
        assert found == [("callbacks.py", line, code) for line in (15, 16) for code in ("NPT001", "NPT002")]
        assert diagnostics[0].message.endswith("(through the call of append_loss at train.py:8)")
    else:
        assert found == []


def test_modules_in_an_import_cycle_see_each_other_as_unknown_whichever_is_read_first():
    root = PROJECTS / "cycle"
    first = Project.at(root)
    a, b = (root / "a.py").resolve(), (root / "b.py").resolve()
    assert first.same_cycle(a, b)
    from_b = first.summary_of(b)
    assert from_b is not None and set(from_b.names) >= {"helper", "loop", "make"}
    # b's own helper calls a's make, which comes round the cycle: b's summary cannot know what it returns
    assert from_b.names["helper"].definition.generic_returns.kind.value == "unknown"
    second = Project.at(root)
    second.summary_of(a)
    assert second.summary_of(b).digest == from_b.digest  # the same summary, whatever was read first


def test_a_module_that_does_not_parse_has_no_summary():
    project = Project.at(PROJECTS / "broken")
    assert project.summary_of((PROJECTS / "broken" / "bad.py").resolve()) is None


def test_levels_put_imported_modules_first_and_explore_a_dense_import_graph_once(tmp_path):
    # module i imports every module before it: 2**40 paths through the graph, 40 levels of one file each
    count = 40
    for i in range(count):
        imports = "".join(f"import m{j}\n" for j in range(i))
        (tmp_path / f"m{i}.py").write_text(imports + "X = 1\n", encoding="utf-8")
    project = Project.at(tmp_path)
    paths = [(tmp_path / f"m{i}.py").resolve() for i in reversed(range(count))]
    levels = project.levels(paths)
    assert levels == [[count - 1 - i] for i in range(count)]


def test_import_cycles_are_found_whatever_else_the_modules_import(tmp_path):
    # a imports b (no cycle) then c; c imports a back: a and c are one cycle, b is on its own
    (tmp_path / "a.py").write_text("import b\nimport c\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("X = 1\n", encoding="utf-8")
    (tmp_path / "c.py").write_text("import a\n", encoding="utf-8")
    project = Project.at(tmp_path)
    a, b, c = ((tmp_path / name).resolve() for name in ("a.py", "b.py", "c.py"))
    assert project.same_cycle(a, c) and project.same_cycle(c, a)
    assert not project.same_cycle(a, b)


def test_a_class_whose_methods_return_its_instances_is_summarised_once_and_followed_through_any_chain(tmp_path):
    # every nn.Module method like .to/.cuda/.train returns self: written out in place, each level of such a
    # class multiplies the summary by the number of its methods
    methods = "".join(f"    def step{i}(self):\n        return self\n\n" for i in range(60))
    (tmp_path / "nets.py").write_text(
        "import torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.head = nn.Linear(3, 3)\n\n" + methods, encoding="utf-8")
    user = tmp_path / "export.py"
    user.write_text("from nets import Net\n\nnet = Net()\n"
                    "weights = net.step1().step2().step3().step4().step5().step6().head.weight.numpy()  # NPT001\n",
                    encoding="utf-8")
    project = Project.at(tmp_path)
    summary = project.summary_of((tmp_path / "nets.py").resolve())
    assert summary is not None and len(repr(summary.data)) < 20_000
    context = LintContext(project=project)
    found = Counter((d.line, d.code) for d in lint_text(user.read_text(encoding="utf-8"), str(user), context=context))
    assert found == expected_findings(user)


def test_import_lines_with_comments_are_followed():
    found = imported_modules("import replay  # noqa: E402\nfrom .data import (load,  # the loader\n    save)  # io\n",
                             "pkg.train", False)
    assert found == ["replay", "pkg.data", "pkg.data.load", "pkg.data.save"]


CALLERS = PROJECTS / "callers"


def _findings_by_file(diagnostics) -> dict[str, Counter]:
    found: dict[str, Counter] = {}
    for diagnostic in diagnostics:
        found.setdefault(Path(diagnostic.filename).name, Counter())[(diagnostic.line, diagnostic.code)] += 1
    return found


def test_a_function_is_read_with_what_callers_in_other_modules_pass_and_its_findings_name_the_call():
    diagnostics, errors = lint_paths([str(CALLERS)], load_settings(CALLERS / "pyproject.toml"))
    assert errors == []
    found = _findings_by_file(diagnostics)
    for name in ("evaluation.py", "train.py", "utils.py", "memory.py", "exporter.py", "tensors.py", "toolbox.py",
                 "fit.py", "run.py", "runners.py"):
        assert found.get(name, Counter()) == expected_findings(CALLERS / name), name
    through = [d.message for d in diagnostics if d.filename.endswith("evaluation.py")]
    assert all("(through the call of " in message and "at train.py:" in message for message in through), through
    assert all(d.fix is None for d in diagnostics if d.filename.endswith("evaluation.py"))


def test_findings_through_other_modules_calls_do_not_depend_on_which_files_the_run_was_given():
    settings = load_settings(CALLERS / "pyproject.toml")
    whole, _ = lint_paths([str(CALLERS)], settings)
    alone, _ = lint_paths([str(CALLERS / "evaluation.py")], settings)

    def lines(diagnostics):
        return sorted((d.line, d.column, d.code, d.message) for d in diagnostics
                      if d.filename.endswith("evaluation.py"))

    assert lines(alone) == lines(whole) and lines(alone)


def test_flake8_reports_what_other_modules_calls_find_as_the_command_line_does():
    cli = run_command("np2torch-lint", "--no-cache", ".", cwd=CALLERS)
    flake8 = run_command("flake8", "--select", "NPT,NPT009", ".", cwd=CALLERS)  # as the project selects
    assert sorted(cli.stdout.decode().splitlines()) == sorted(flake8.stdout.decode().splitlines())
    assert b"evaluation.py:9:28: NPT001" in flake8.stdout


def test_the_analysis_of_one_file_needs_no_module_that_drives_whole_runs():
    # project/ and analysis/ parse through parsing.py; importing engine (which imports project) made a cycle
    import ast as python_ast

    package = REPO / "np2torch_lint"
    importing_the_engine = []
    for path in [*(package / "project").glob("*.py"), *(package / "analysis").glob("*.py"), package / "parsing.py"]:
        for node in python_ast.walk(python_ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, python_ast.ImportFrom) and (node.module or "").split(".")[-1] in ("engine", "jobs"):
                importing_the_engine.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert importing_the_engine == []


def test_what_a_module_imports_unindented_holds_whichever_module_of_a_cycle_runs_first():
    text = """import numpy as np
import torch.nn as nn, os.path
from .utils import *
from ..data import (load,
                    Batch as Rows)
try:
    import cupy as cp
except ImportError:
    cp = None
if TYPE_CHECKING:
    from torch import Tensor
import pandas as pd
pd = None
"""
    bindings, starred = top_level_imports(text, "pkg.sub.mod", False)
    assert bindings == {"np": "numpy", "nn": "torch.nn", "os": "os", "load": "pkg.data.load",
                        "Rows": "pkg.data.Batch"}  # not cp, Tensor (indented) nor pd (assigned again)
    assert starred == ["pkg.sub.utils"]
    assert top_level_imports("__all__ = ['f']\nimport numpy as np\n", "pkg", True) == ({}, [])


def test_a_file_that_imports_the_projects_modules_is_read_though_it_names_neither_torch_nor_numpy():
    project = Project.at(CALLERS)
    entry = CALLERS / "run.py"
    assert project.may_have_findings(entry, entry.read_text(encoding="utf-8"))
    assert not project.may_have_findings(entry, "import os\nprint(os.getcwd())\n")
    assert not project.may_have_findings(entry, "from run import main\n")  # itself, not another module
