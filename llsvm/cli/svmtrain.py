"""llsvm-svm-train: LIBSVM's svm-train command line, for the scripts written for it (tools/grid.py -svmtrain,
easy.py's svmtrain_exe, Makefiles).

svm-train's numbering and defaults (-s 0..4: C-SVC, nu-SVC, one-class, epsilon-SVR, nu-SVR; -t 2; -g 1/num_features),
its parsing (an option is a dash and a letter taking the next word, except -q; the first word that is not an option
is the training file; a value is read as C's atoi/atof read it, so `-c 2x` is 2 and `-c x` is 0), its usage text and
exit code 1 on no arguments or a bad option, its output, its model file name (training_set_file.model in the
current directory), and its folds: -v draws them as svm-train does (llsvm-train's --libsvm-rand), so a
cross-validation rate is svm-train's.

A thin front end: the command line becomes llsvm-train's (-s smo, nu_svc, one_class, epsilon_svr, nu_svr) and
llsvm-train runs it (llsvm/cli/train.py), the one training path. An option svm-train reads but the chosen type does
not use (-c of nu-SVC and one-class, -n of C-SVC and epsilon-SVR, -p but for epsilon-SVR, -wi but for C-SVC, -g, -d,
-r of a kernel without them) is left out, as svm-train ignores it (and leaves it unchecked).
"""
import re
import sys

import click

USAGE = (
    "Usage: svm-train [options] training_set_file [model_file]\n"
    "options:\n"
    "-s svm_type : set type of SVM (default 0)\n"
    "\t0 -- C-SVC\t\t(multi-class classification)\n"
    "\t1 -- nu-SVC\t\t(multi-class classification)\n"
    "\t2 -- one-class SVM\n"
    "\t3 -- epsilon-SVR\t(regression)\n"
    "\t4 -- nu-SVR\t\t(regression)\n"
    "-t kernel_type : set type of kernel function (default 2)\n"
    "\t0 -- linear: u'*v\n"
    "\t1 -- polynomial: (gamma*u'*v + coef0)^degree\n"
    "\t2 -- radial basis function: exp(-gamma*|u-v|^2)\n"
    "\t3 -- sigmoid: tanh(gamma*u'*v + coef0)\n"
    "\t4 -- precomputed kernel (kernel values in training_set_file)\n"
    "-d degree : set degree in kernel function (default 3)\n"
    "-g gamma : set gamma in kernel function (default 1/num_features)\n"
    "-r coef0 : set coef0 in kernel function (default 0)\n"
    "-c cost : set the parameter C of C-SVC, epsilon-SVR, and nu-SVR (default 1)\n"
    "-n nu : set the parameter nu of nu-SVC, one-class SVM, and nu-SVR (default 0.5)\n"
    "-p epsilon : set the epsilon in loss function of epsilon-SVR (default 0.1)\n"
    "-m cachesize : set cache memory size in MB (default 100)\n"
    "-e epsilon : set tolerance of termination criterion (default 0.001)\n"
    "-h shrinking : whether to use the shrinking heuristics, 0 or 1 (default 1)\n"
    "-b probability_estimates : whether to train a SVC or SVR model for probability estimates, 0 or 1 (default 0)\n"
    "-wi weight : set the parameter C of class i to weight*C, for C-SVC (default 1)\n"
    "-v n: n-fold cross validation mode\n"
    "-q : quiet mode (no outputs)\n"
)

# svm-train's -s numbers: llsvm-train's solvers
SVM_TYPES = {0: "smo", 1: "nu_svc", 2: "one_class", 3: "epsilon_svr", 4: "nu_svr"}
C_TYPES = ("smo", "epsilon_svr", "nu_svr")          # the types svm_train reads C of (and svm_check_parameter checks)
NU_TYPES = ("nu_svc", "one_class", "nu_svr")
# the kernel parameters each -t uses (svm_check_parameter checks gamma and degree only there)
GAMMA_KERNELS, DEGREE_KERNELS, COEF0_KERNELS = (1, 2, 3), (1,), (1, 3)

_ATOI = re.compile(r"[ \t\n\v\f\r]*[+-]?\d+")
_ATOF = re.compile(r"[ \t\n\v\f\r]*[+-]?(inf(inity)?|nan(\([0-9A-Za-z_]*\))?|0[xX]([0-9a-fA-F]+\.?[0-9a-fA-F]*|"
                   r"\.[0-9a-fA-F]+)([pP][+-]?\d+)?|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)", re.IGNORECASE)


def atoi(text):
    """C's atoi: the leading integer of text, 0 without one (an int's overflow aside)."""
    m = _ATOI.match(text)
    if not m:
        return 0
    value = int(m.group())
    return (value + 2**31) % 2**32 - 2**31          # C's int, as strtol's long cast to int on LP64


def atof(text):
    """C's atof: the leading floating-point number of text (decimal, hexadecimal, inf, nan), 0.0 without one."""
    m = _ATOF.match(text)
    if not m:
        return 0.0
    word = m.group().strip()
    low = word.lower().lstrip("+-")
    if low.startswith("0x"):
        return float.fromhex(word)
    if low.startswith("nan"):
        return float("nan")
    return float(word)


def _g(value):
    """A float as an llsvm-train argument, exactly (repr round-trips)."""
    return repr(float(value))


class Usage(Exception):
    """svm-train's exit_with_help: the usage on stdout, exit 1; `message` first on stderr when given."""

    def __init__(self, message=None):
        super().__init__(message)
        self.message = message


def parse(argv):
    """svm-train's parse_command_line: (the values given, by option letter; the -wi weights; the training file;
    the model file or None). Raises Usage where svm-train exits with its help."""
    given, weights = {}, []
    i = 0
    while i < len(argv):
        word = argv[i]
        if not word.startswith("-"):
            break
        i += 1
        if i >= len(argv):
            raise Usage()
        letter = word[1:2]
        if letter == "q":
            given["q"] = True
            continue                        # -q takes no value: svm-train's i-- (the next word is read again)
        value = argv[i]
        i += 1
        if letter in "stdhb":
            given[letter] = atoi(value)
        elif letter in "grnmcep":
            given[letter] = atof(value)
        elif letter == "v":
            given["v"] = atoi(value)
            if given["v"] < 2:
                raise Usage("n-fold cross validation: n must >= 2")
        elif letter == "w":
            weights.append((atoi(word[2:]), atof(value)))
        else:
            raise Usage(f"Unknown option: -{letter}")
    if i >= len(argv):
        raise Usage()
    return given, weights, argv[i], argv[i + 1] if i + 1 < len(argv) else None


def translate(given, weights, training_set_file, model_file):
    """llsvm-train's command line for svm-train's options. A -s that is not 0..4 is svm_check_parameter's
    "unknown svm type" (ParamError, after the input is checked, svm-train's order)."""
    from .common import ParamError, check_input
    svm_type = given.get("s", 0)
    if svm_type not in SVM_TYPES:
        check_input(training_set_file)
        raise ParamError("unknown svm type")
    solver = SVM_TYPES[svm_type]
    kernel = given.get("t", 2)
    args = ["-s", solver, "--libsvm-rand", "-t", str(kernel)]
    # gamma 0 is svm-train's default, 1/num_features (read_problem sets it when it is 0)
    if given.get("g", 0.0) != 0.0 and kernel in GAMMA_KERNELS:
        args += ["-g", _g(given["g"])]
    if "d" in given and kernel in DEGREE_KERNELS:
        args += ["-d", str(given["d"])]
    if "r" in given and kernel in COEF0_KERNELS:
        args += ["-r", _g(given["r"])]
    if "c" in given and solver in C_TYPES:
        args += ["-c", _g(given["c"])]
    if "n" in given and solver in NU_TYPES:
        args += ["-n", _g(given["n"])]
    if "p" in given and solver == "epsilon_svr":
        args += ["-p", _g(given["p"])]
    for flag, letter in (("-m", "m"), ("-e", "e")):
        if letter in given:
            args += [flag, _g(given[letter])]
    if "h" in given:
        args += ["--shrinking", str(given["h"])]
    if "b" in given:
        args += ["-b", str(given["b"])]
    if solver == "smo":
        for label, weight in weights:
            args += [f"-w{label}", _g(weight)]
    if "v" in given:
        args += ["-v", str(given["v"])]
    if given.get("q"):
        args.append("-q")
    args.append("--")
    args.append(training_set_file)
    if model_file is not None:
        args.append(model_file)
    return args


@click.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False,
                                 "help_option_names": []}, add_help_option=False)
@click.argument("argv", nargs=-1, type=click.UNPROCESSED)
def main(argv):
    """svm-train's command line (the usage above): llsvm-svm-train [options] training_set_file [model_file]."""
    from ..errors import LLSVMError
    from .common import report_error
    if argv == ("--version",):
        from .usage import version_text
        click.echo(version_text("llsvm-svm-train"), nl=False)
        sys.exit(0)
    try:
        args = translate(*parse(list(argv)))
    except Usage as exc:
        if exc.message:
            click.echo(exc.message, err=True)
        click.echo(USAGE, nl=False)
        sys.exit(1)
    except LLSVMError as exc:           # "unknown svm type", or the input that cannot be opened before it
        report_error(exc)
        sys.exit(1)
    from .train import main as train_main
    train_main.main(args=args, prog_name="llsvm-svm-train", standalone_mode=True)


if __name__ == "__main__":  # python -m llsvm.cli.svmtrain
    main()
