# SPDX-License-Identifier: MIT
# bash completion for netpreflight(1). One table of commands and their options;
# tests/pkg/completion.sh checks it against "netpreflight help", so a command or
# option added to the CLI without a line here fails the tests.

_netpreflight()
{
	local cur prev words cword
	_init_completion || return

	local globals="--socket --sysfs-root --json --help --version"
	local -A cmd_opts=(
		[interfaces]="--json --capture --help"
		[rdma]="--json --sysfs-root --help"
		[check]="--nodes --timeout --json --help"
		[status]="--json --help"
		[env]="--nodes --format --job-wide --timeout --max-age --cached --json --help"
		[help]=""
		[version]=""
	)
	local formats="shell taskprolog nccl-conf json"

	# Options that take a value, wherever they stand.
	case $prev in
	--socket | --capture)
		_filedir
		return
		;;
	--sysfs-root)
		_filedir -d
		return
		;;
	--format | -f)
		COMPREPLY=($(compgen -W "$formats" -- "$cur"))
		return
		;;
	--nodes | -n)
		# Inside an allocation the job's own node list is the usual answer.
		[[ -n ${SLURM_JOB_NODELIST-} ]] &&
			COMPREPLY=($(compgen -W "$SLURM_JOB_NODELIST" -- "$cur"))
		return
		;;
	--timeout | --max-age | -t | -a)
		return
		;;
	esac

	# The command is the first word that is neither an option nor an option's value.
	local i cmd=
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		--socket | --sysfs-root | --capture | --format | --nodes | --timeout | --max-age | -f | -n | -t | -a)
			((i++))
			;;
		-*) ;;
		*)
			cmd=${words[i]}
			break
			;;
		esac
	done

	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "$globals" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "${!cmd_opts[*]}" -- "$cur"))
		fi
		return
	fi
	[[ -v cmd_opts[$cmd] ]] || return
	if [[ $cur == --*=* ]]; then
		# --format=sh<TAB>
		if [[ $cur == --format=* ]]; then
			COMPREPLY=($(compgen -W "$formats" -- "${cur#--format=}"))
		fi
		return
	fi
	COMPREPLY=($(compgen -W "${cmd_opts[$cmd]} --socket" -- "$cur"))
} &&
	complete -F _netpreflight netpreflight
